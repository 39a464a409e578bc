// `npm start`: install, provision and start the local stack, build, then run the API and the worker.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ensureChatModel,
  ensureEmbeddingModel,
  ensureNpmDeps,
  log,
  provision,
  ROOT,
  runOnSupportedNode,
} from './provision.mjs';
import { API_ENV, API_NODE_FLAGS, WORKER_NODE_FLAGS } from './launch.mjs';
import { startStack } from './services.mjs';
import { supervise } from './supervise.mjs';

const run = promisify(execFile);

await runOnSupportedNode();
ensureNpmDeps();
const bins = provision();
const dataDir = process.env.DATA_DIR ?? join(ROOT, '.data');
const stack = await startStack({ profile: 'dev', dataDir, bins, mailSink: true });

log('building (tsc)');
execFileSync('npm', ['run', '--silent', 'build'], {
  cwd: ROOT,
  stdio: ['ignore', process.stderr, process.stderr],
});

function usesLocalModel() {
  const provider = process.env.LLM_PROVIDER;
  return provider === 'local' || (!provider && !process.env.OPENAI_API_KEY);
}

const port = process.env.PORT ?? '3000';
const env = {
  ...process.env,
  ...stack.env,
  PORT: port,
  LOCAL_EMBEDDING_MODEL_DIR: process.env.LOCAL_EMBEDDING_MODEL_DIR ?? ensureEmbeddingModel(),
  // the local chat model, unless an OpenAI-compatible server answers instead (see LLM_PROVIDER in lib/config/)
  ...(usesLocalModel()
    ? { LOCAL_LLM_MODEL_PATH: process.env.LOCAL_LLM_MODEL_PATH ?? ensureChatModel() }
    : {}),
  PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`,
};
// The CLI (`npm run cli`) reads this to reach the same database with the same signing secret, to build the
// same services (the local models' files among them), and to name this API's address (`bootstrap --export`).
const cliEnv = { ...stack.env };
for (const name of ['LOCAL_EMBEDDING_MODEL_DIR', 'LOCAL_LLM_MODEL_PATH', 'PUBLIC_BASE_URL']) {
  if (env[name]) cliEnv[name] = env[name];
}
writeFileSync(join(dataDir, 'stack-env.json'), JSON.stringify(cliEnv, null, 2), { mode: 0o600 });
// A crashed API or worker is started again with backoff (stack/supervise.mjs); only Ctrl+C stops the stack.
const apps = [
  supervise({
    name: 'api',
    log,
    start: () =>
      spawn(process.execPath, [...API_NODE_FLAGS, join(ROOT, 'dist/api/server.js')], {
        env: { ...API_ENV, ...env },
        stdio: 'inherit',
      }),
  }),
  supervise({
    name: 'worker',
    log,
    start: () =>
      spawn(process.execPath, [...WORKER_NODE_FLAGS, join(ROOT, 'dist/worker/main.js')], {
        env,
        stdio: 'inherit',
      }),
  }),
];

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await Promise.all(apps.map((app) => app.stop()));
  await stack.stop();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());

/** Whether a worker polls the service's task queue, as Temporal sees it. */
async function workerPolls() {
  const args = ['task-queue', 'describe', '--task-queue', env.TEMPORAL_TASK_QUEUE ?? 'agent-workspace'];
  args.push(
    '--address',
    env.TEMPORAL_ADDRESS,
    '--namespace',
    env.TEMPORAL_NAMESPACE ?? 'default',
    '-o',
    'json',
  );
  try {
    const { stdout } = await run(bins.temporal, args, { timeout: 5000 });
    return (JSON.parse(stdout).pollers ?? []).length > 0;
  } catch {
    return false;
  }
}

// Ready means usable: the API answers and a worker polls (it bundles the workflows first, which takes a while);
// a request sent before that would wait in Temporal's queue.
const base = `http://127.0.0.1:${port}`;
const apiAnswers = () =>
  fetch(`${base}/healthz`)
    .then((r) => r.ok)
    .catch(() => false);
let ready = false;
for (const until = Date.now() + 180_000; !ready && Date.now() < until;) {
  ready = (await apiAnswers()) && (await workerPolls());
  if (!ready) await new Promise((r) => setTimeout(r, 500));
}
if (!ready) log('the API or the worker is not ready after 3 minutes: see the lines above');
console.log(`
Agent Workspace Service is ${ready ? 'ready' : 'starting (not ready yet)'}
  API:         ${base}
  API docs:    ${base}/docs   (contract: ${base}/openapi.yaml)
  Temporal UI: ${stack.env.TEMPORAL_UI_URL ?? '(external Temporal: see your cluster UI)'}
  Mail sink:   ${stack.env.SMTP_URL ? join(dataDir, 'mail') : '(external SMTP)'}
  Agent mail:  smtp://127.0.0.1:${stack.env.INBOUND_SMTP_PORT} (inbound SMTP for agents' emailAddress)
Credentials: npm run --silent cli -- bootstrap --org-name ACME --email you@example.com --name "Your Name"
Press Ctrl+C to stop.`);
