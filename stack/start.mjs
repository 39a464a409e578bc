// `npm start`: install, provision and start the local stack, build, then run the API and the worker.
import { execFileSync, spawn } from 'node:child_process';
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
  // the local chat model, unless an OpenAI-compatible server answers instead (see LLM_PROVIDER in lib/config.ts)
  ...(usesLocalModel()
    ? { LOCAL_LLM_MODEL_PATH: process.env.LOCAL_LLM_MODEL_PATH ?? ensureChatModel() }
    : {}),
  PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${port}`,
};
// The CLI (`npm run cli`) reads this to reach the same database with the same signing secret, and to build the
// same services (the local models' files among them).
const cliEnv = { ...stack.env };
for (const name of ['LOCAL_EMBEDDING_MODEL_DIR', 'LOCAL_LLM_MODEL_PATH']) {
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

const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 300; i++) {
  const ok = await fetch(`${base}/healthz`)
    .then((r) => r.ok)
    .catch(() => false);
  if (ok) break;
  await new Promise((r) => setTimeout(r, 200));
}
console.log(`
Agent Workspace Service is running
  API:         ${base}
  API docs:    ${base}/docs   (contract: ${base}/openapi.yaml)
  Temporal UI: ${stack.env.TEMPORAL_UI_URL ?? '(external Temporal: see your cluster UI)'}
  Mail sink:   ${stack.env.SMTP_URL ? join(dataDir, 'mail') : '(external SMTP)'}
  Agent mail:  smtp://127.0.0.1:${stack.env.INBOUND_SMTP_PORT} (inbound SMTP for agents' emailAddress)
Credentials: npm run --silent cli -- bootstrap --org-name ACME --email you@example.com --name "Your Name"
Press Ctrl+C to stop.`);
