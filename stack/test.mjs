// `npm test`: install, provision, start a throwaway stack on the test ports, run mocha against it.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureNpmDeps, provision, ROOT, STACK_DIR } from './provision.mjs';
import { runSchemathesis } from './schemathesis.mjs';
import { startStack } from './services.mjs';

ensureNpmDeps();
const bins = provision();
const dataDir = join(STACK_DIR, 'test-data', String(Date.now()));
const stack = await startStack({ profile: 'test', dataDir, bins });

const env = {
  ...process.env,
  ...stack.env,
  NODE_ENV: 'test',
  VALIDATE_RESPONSES: 'true',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
};
const args = process.argv.length > 2 ? process.argv.slice(2) : ['test/**/*.test.ts'];
const mocha = spawn(join(ROOT, 'node_modules/.bin/mocha'), args, {
  cwd: ROOT,
  env,
  stdio: ['inherit', 'pipe', 'inherit'],
});
// Echo mocha's output and remember its summary, to close with a plain `N passed, N failed` line.
let output = '';
mocha.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  output = (output + chunk.toString()).slice(-4000);
});
const mochaCode = await new Promise((resolve) =>
  mocha.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
let passed = count('passing');
let failed = count('failing');
let code = mochaCode;
// The whole suite in CI (or SCHEMATHESIS=1) also checks the live API against the contract; it counts as one test.
if (process.argv.length <= 2 && (process.env.CI || process.env.SCHEMATHESIS === '1')) {
  const stCode = await runSchemathesis(env, dataDir);
  console.log(`schemathesis: ${stCode === 0 ? 'no findings' : 'FINDINGS (see above)'}`);
  if (stCode === 0) passed++;
  else failed++;
  code = code || stCode;
}
console.log(`tests: ${passed} passed, ${failed} failed`);
await stack.stop();
if (!process.env.KEEP_TEST_DATA) rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
