// Lint step: the TypeScript client's types (clients/typescript/src/schema.d.ts) are exactly what openapi-typescript
// makes of openapi.yaml now, so a contract change that was not regenerated fails here instead of in a user's build.
// `node stack/check-client.mjs --write` (npm run client:generate) regenerates them. Offline: the generator is a
// pinned devDependency and openapi.yaml has no remote references.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { ROOT } from './provision.mjs';

const target = join(ROOT, 'clients/typescript/src/schema.d.ts');
const regenerate = 'npm run client:generate';

// What `openapi-typescript openapi.yaml --default-non-nullable false --empty-objects-unknown` writes, with one line
// saying how to regenerate. The options make the types say what the contract says: a field with a default may be
// left out of a request (the default makes it required, even in request bodies), and an object schema without
// `properties` (a JSON schema, a chain payload) takes any keys (the default types it as an empty object).
const generated =
  `// Generated from openapi.yaml: do not edit, run \`${regenerate}\`.\n` +
  COMMENT_HEADER +
  astToString(
    await openapiTS(pathToFileURL(join(ROOT, 'openapi.yaml')), {
      defaultNonNullable: false,
      emptyObjectsUnknown: true,
    }),
  );

if (process.argv.includes('--write')) {
  writeFileSync(target, generated);
  console.log('clients/typescript/src/schema.d.ts: regenerated from openapi.yaml');
} else {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // a missing file is a difference like any other
  }
  if (committed !== generated) {
    console.error(
      `clients/typescript/src/schema.d.ts differs from openapi.yaml: run \`${regenerate}\` and commit it`,
    );
    process.exit(1);
  }
  console.log('clients/typescript/src/schema.d.ts: matches openapi.yaml');
}
