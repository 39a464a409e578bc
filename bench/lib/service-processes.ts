/**
 * The API and the worker as they ship, each in its own process: `dist/api/server.js` and `dist/worker/main.js`
 * with the node flags and environment `npm start` gives them (stack/launch.mjs). bench/run.mjs builds dist/ first
 * for the benches that use this.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { API_ENV, API_NODE_FLAGS, WORKER_NODE_FLAGS } from '@stack/launch.mjs';
import { freePort, untilHealthy } from '@test/helpers/api-process';

// SIGTERM is the process's own shutdown, which also writes its CPU profile (PROFILE=1).
export { stopProcess } from '@test/helpers/worker-process';

const ROOT = join(__dirname, '..', '..');

/** `--cpu-prof` into .stack/bench-profiles with PROFILE=1, else nothing. */
export function cpuProfileFlags(): string[] {
  return process.env.PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${join(process.cwd(), '.stack/bench-profiles')}`]
    : [];
}

/** Every process a bench started and has not seen end: killed when the bench exits, even when its set-up threw. */
const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((child) => child.kill('SIGKILL')));

function spawnEntry(entry: string, flags: string[], env: NodeJS.ProcessEnv, root = ROOT) {
  const child = spawn(process.execPath, [...flags, ...cpuProfileFlags(), join(root, 'dist', entry)], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * The API on a free loopback port; resolves once `/healthz` answers 200. `env` adds to this process's; `root` is
 * another checkout whose built API to run instead of this one's.
 */
export async function startApiProcess(
  env: NodeJS.ProcessEnv = {},
  root = ROOT,
): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawnEntry(
    'api/server.js',
    API_NODE_FLAGS,
    { ...API_ENV, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...env },
    root,
  );
  await untilHealthy(`http://127.0.0.1:${port}`, child);
  return { child, port };
}

/** The worker on `env.TEMPORAL_TASK_QUEUE`. It polls once it has bundled the workflows: wait on a first run. */
export function startWorkerProcess(env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawnEntry('worker/main.js', WORKER_NODE_FLAGS, env);
}
