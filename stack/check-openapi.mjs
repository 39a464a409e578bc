// Lint step: openapi.yaml parses without duplicate keys and compiles in express-openapi-validator. A spec the
// validator rejects makes every request of the running service fail with a 500, and neither prettier nor the
// TypeScript compiler sees it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import request from 'supertest';
import { parseDocument } from 'yaml';
import { ROOT } from './provision.mjs';

const specPath = join(ROOT, 'openapi.yaml');
const doc = parseDocument(readFileSync(specPath, 'utf8'), { uniqueKeys: true });
if (doc.errors.length) {
  for (const e of doc.errors) console.error(`openapi.yaml: ${e.message}`);
  process.exit(1);
}
let failure;
const app = express();
app.use(OpenApiValidator.middleware({ apiSpec: specPath, validateRequests: true, validateResponses: true }));
app.use((err, _req, res, _next) => {
  if (!err.status || err.status >= 500) failure = err;
  res.status(err.status ?? 500).end();
});
await request(app).get('/health');
if (failure) {
  console.error(`openapi.yaml does not compile: ${failure.message}`);
  process.exit(1);
}
// Each rule beyond the schema names the 400 that answers it (stack/schemathesis-hooks.py accepts exactly those):
// a code, a message pattern, or both, and the pattern is one a regular expression engine reads.
const problems = [];
for (const [path, item] of Object.entries(doc.toJS().paths))
  for (const [method, op] of Object.entries(item))
    for (const rule of op?.['x-rules-beyond-schema'] ?? []) {
      const where = `${method.toUpperCase()} ${path}: rule '${rule.rule}'`;
      if (typeof rule.rule !== 'string' || !(rule.code || rule.message))
        problems.push(`${where} names no code or message`);
      try {
        if (rule.message !== undefined) new RegExp(rule.message, 'u');
      } catch (err) {
        problems.push(`${where}: ${err.message}`);
      }
    }
if (problems.length) {
  for (const p of problems) console.error(`openapi.yaml: ${p}`);
  process.exit(1);
}
console.log('openapi.yaml: no duplicate keys, compiles, every rule beyond the schema names its answer');
