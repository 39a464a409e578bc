import { createRequire } from 'node:module';

/**
 * Requires modules of express-openapi-validator itself (5.6.2; its `dist/` paths and its own dependencies), for the
 * patches that replace parts of it (route-matchers.ts, parameter-mutation.ts, strict-numbers.ts,
 * read-only.ts) and their tests.
 */
export const validatorRequire = createRequire(require.resolve('express-openapi-validator'));
