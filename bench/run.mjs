// `npm run bench [name…]`: provision and start a throwaway test-profile stack, run the named benchmarks
// (bench/<name>.ts; default: every bench/*.ts in order, except `_`-prefixed scratch files) one after the
// other against it, then stop the stack. Options after the names (`--minutes 3`) go to every named bench.
// `soak` (bench/soak.ts, `npm run soak`) runs only when named.
// STACK_PORT_OFFSET shifts the stack's ports as for `npm test`; KEEP_BENCH_DATA keeps the data folder.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  ensureChatModel,
  ensureEmbeddingModel,
  ensureNpmDeps,
  log,
  provision,
  ROOT,
  runOnSupportedNode,
  STACK_DIR,
} from '../stack/provision.mjs';
import { startStack } from '../stack/services.mjs';

await runOnSupportedNode();
const benchDir = join(ROOT, 'bench');
const firstOption = process.argv.findIndex((a, i) => i >= 2 && a.startsWith('--'));
const benchArgs = firstOption < 0 ? [] : process.argv.slice(firstOption);
const names = process.argv
  .slice(2, firstOption < 0 ? undefined : firstOption)
  .map((n) => n.replace(/^bench\//, '').replace(/\.ts$/, ''));
// Benches that run only when named: the soak runs for minutes to an hour.
const NAMED_ONLY = new Set(['soak']);
const all = readdirSync(benchDir)
  .filter((f) => f.endsWith('.ts') && !f.startsWith('_') && !NAMED_ONLY.has(f.slice(0, -3)))
  .map((f) => f.slice(0, -3))
  .sort();
const selected = names.length > 0 ? names : all;
const unknown = selected.filter((n) => !existsSync(join(benchDir, `${n}.ts`)));
if (unknown.length > 0) {
  log(`unknown benchmark(s): ${unknown.join(', ')}; available: ${[...all, ...NAMED_ONLY].join(', ')}`);
  process.exit(2);
}

// Benches that measure a library in-process and use no service: run alone, they start no stack.
const STACKLESS = new Set(['parse-memory', 'local-model']);
const needsStack = selected.some((n) => !STACKLESS.has(n));

ensureNpmDeps();
// api-read, turns, webhooks, neighbours and soak measure the API (and the worker) as they ship (dist/), so they need a
// fresh build.
if (selected.some((n) => ['api-read', 'turns', 'webhooks', 'neighbours', 'soak'].includes(n))) {
  log('building (tsc)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
}
const dataDir = join(STACK_DIR, 'bench-data', String(Date.now()));
const stack = needsStack ? await startStack({ profile: 'test', dataDir, bins: provision() }) : undefined;

const env = {
  ...process.env,
  ...stack?.env,
  NODE_ENV: 'production',
  LOCAL_EMBEDDING_MODEL_DIR: process.env.LOCAL_EMBEDDING_MODEL_DIR ?? ensureEmbeddingModel(),
  LOCAL_LLM_MODEL_PATH: process.env.LOCAL_LLM_MODEL_PATH ?? ensureChatModel(),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
};
let code = 0;
let current;
const stopAll = async () => {
  current?.kill('SIGTERM');
  await stack?.stop();
  if (stack && !process.env.KEEP_BENCH_DATA) rmSync(dataDir, { recursive: true, force: true });
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

try {
  for (const name of selected) {
    log(`bench ${name}`);
    current = spawn(
      process.execPath,
      [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(benchDir, `${name}.ts`), ...benchArgs],
      {
        cwd: ROOT,
        env,
        stdio: 'inherit',
      },
    );
    const exit = await new Promise((resolve) =>
      current.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
    );
    current = undefined;
    if (exit !== 0) {
      log(`bench ${name} failed (exit ${exit})`);
      code = 1;
    }
  }
} finally {
  await stopAll();
}
process.exit(code);
