// `npm run mutate`: StrykerJS on the security and durability core (stryker.config.mjs), against a throwaway
// local test stack like `npm test` starts. Extra arguments go to `stryker run` (for example `--force`).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, runOnSupportedNode } from './provision.mjs';
import { startTestStack } from './test-stack.mjs';

await runOnSupportedNode();
const { env, stop } = await startTestStack(`mutate-${Date.now()}`);
const stryker = spawn(join(ROOT, 'node_modules/.bin/stryker'), ['run', ...process.argv.slice(2)], {
  cwd: ROOT,
  env,
  stdio: 'inherit',
});
const code = await new Promise((resolve) =>
  stryker.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
await stop();
process.exit(code);
