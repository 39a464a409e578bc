// `npm run mutate [area]`: StrykerJS on one area of stryker.config.mjs (default `core`, the security and durability
// core), against a throwaway local test stack like `npm test` starts. Further arguments go to `stryker run` (for
// example `npm run mutate -- credits --force`).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, runOnSupportedNode } from './provision.mjs';
import { startTestStack } from './test-stack.mjs';

await runOnSupportedNode();
const args = process.argv.slice(2);
const area = args[0] && !args[0].startsWith('-') ? args.shift() : 'core';
// The config reads the area; an unknown one fails here, before a stack starts.
process.env.MUTATE_AREA = area;
await import(join(ROOT, 'stryker.config.mjs'));
const { env, stop } = await startTestStack(`mutate-${Date.now()}`);
const stryker = spawn(join(ROOT, 'node_modules/.bin/stryker'), ['run', ...args], {
  cwd: ROOT,
  env,
  stdio: 'inherit',
});
const code = await new Promise((resolve) =>
  stryker.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
await stop();
process.exit(code);
