// `npm test`: install, provision, start a throwaway stack on the test ports, run mocha against it.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureNpmDeps, provision, ROOT, STACK_DIR } from './provision.mjs';
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
const code = await new Promise((resolve) => mocha.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
console.log(`tests: ${count('passing')} passed, ${count('failing')} failed`);
await stack.stop();
if (!process.env.KEEP_TEST_DATA) rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
