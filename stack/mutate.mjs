// `npm run mutate`: StrykerJS on the security and durability core (stryker.config.mjs), against a throwaway
// local test stack like `npm test` starts. Extra arguments go to `stryker run` (for example `--force`).
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureNpmDeps, ensureTemporalTestServer, provision, ROOT, STACK_DIR } from './provision.mjs';
import { startStack } from './services.mjs';

ensureNpmDeps();
const bins = provision();
const dataDir = join(STACK_DIR, 'test-data', `mutate-${Date.now()}`);
const stack = await startStack({ profile: 'test', dataDir, bins });
const stryker = spawn(join(ROOT, 'node_modules/.bin/stryker'), ['run', ...process.argv.slice(2)], {
  cwd: ROOT,
  env: {
    ...process.env,
    ...stack.env,
    TEMPORAL_TEST_SERVER: ensureTemporalTestServer(),
    NODE_ENV: 'test',
    VALIDATE_RESPONSES: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  },
  stdio: 'inherit',
});
const code = await new Promise((resolve) =>
  stryker.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
await stack.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
