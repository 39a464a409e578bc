import { createRequire } from 'node:module';

/**
 * The express-openapi-validator release whose internals the modules of this folder replace or wrap (its `dist/`
 * paths, the shapes of its context and mutator). 5.6.2 is the newest release on the registry. Another installed
 * version stops the API at start (`patchValidator`) until each patch is checked against it: the unit tests beside
 * them (test/api/route-lookup, route-matchers, parameter-mutation .unit.test.ts) compare patched and unpatched behaviour.
 */
export const PATCHED_VERSION = '5.6.2';

/** Requires modules of express-openapi-validator itself (its `dist/` paths and its own dependencies). */
export const validatorRequire = createRequire(require.resolve('express-openapi-validator'));

export function installedVersion(): string {
  return (validatorRequire('../package.json') as { version: string }).version;
}

/** Fails unless the installed validator is the release the patches were written against. */
export function assertPatchedVersion(version = installedVersion()): void {
  if (version !== PATCHED_VERSION)
    throw new Error(
      `express-openapi-validator ${version} is installed, but api/validator/ patches the internals of ` +
        `${PATCHED_VERSION}: check each patch there against the new release (its unit tests compare patched and ` +
        'unpatched behaviour), then raise PATCHED_VERSION',
    );
}
