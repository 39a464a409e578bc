// `npm run cli -- <command>`: runs cli/main.ts against the stack `npm start` runs (or the env's servers).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureNpmDeps, ROOT, runOnSupportedNode } from './provision.mjs';

await runOnSupportedNode({ quiet: true });
ensureNpmDeps();
const dataDir = process.env.DATA_DIR ?? join(ROOT, '.data');
const envFile = join(dataDir, 'stack-env.json');
const stackEnv = existsSync(envFile) ? JSON.parse(readFileSync(envFile, 'utf8')) : {};
const env = { ...stackEnv, ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };
const child = spawn(
  process.execPath,
  [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'cli/main.ts'), ...process.argv.slice(2)],
  { env, stdio: 'inherit' },
);
child.on('exit', (code) => process.exit(code ?? 1));
