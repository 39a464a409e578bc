import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Express } from 'express';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import type { TestEnv } from './env';
import { startScriptedLlm } from './llm';
import { startTcpProxy } from './tcp-proxy';
import { eventually } from './wait';
import { ROOT, spawnEntry } from './worker-process';

/** The servers of a fault stack a test may kill and start again (names as stack/services.mjs starts them); the
 * object store and Redis are the stack's own only when it was started with `ownStores`. */
export type StackServer = 'mongo-h2' | 'temporal' | 'seaweedfs' | 'redis';

interface StackHandle {
  env: Record<string, string>;
  stop: () => Promise<void>;
  kill: (name: StackServer, signal?: NodeJS.Signals) => Promise<void>;
  restart: (name: StackServer) => Promise<void>;
  signal: (name: StackServer, signal: NodeJS.Signals) => void;
}

export interface FaultStack extends Omit<StackHandle, 'env' | 'signal'> {
  /** SIGSTOPs a server: it keeps its sockets open and answers nothing, like a partition or a stuck disk. The
   * scripted model server lives in the test process: `model` holds every byte to and from it instead. */
  freeze: (name: StackServer | 'model') => void;
  /** SIGCONTs a frozen server. */
  thaw: (name: StackServer | 'model') => void;
  /** A TestEnv whose `app` is the API process's URL (supertest takes either) and whose deps reach this stack's
   * database and Temporal from the test process. */
  env: TestEnv;
  url: string;
  /** Starts (or, after a kill, starts again) the real API / worker entry point as its own process. */
  startApi: () => Promise<void>;
  startWorker: () => void;
  /** SIGKILLs the process and waits until it is gone. */
  killApi: () => Promise<void>;
  killWorker: () => Promise<void>;
  /** The API's own answer to GET /healthz (status and body), or null while nothing listens. */
  health: () => Promise<{ status: number; body: { failing?: string[] } } | null>;
  close: () => Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * A stack of its own for a test that kills things: its own embedded database and its own Temporal dev server,
 * both on disk in their own data folder (so what they acknowledged survives a SIGKILL and a restart), on ports
 * `portShift` (50) above this run's test stack: files that run at once (mocha's parallel jobs) pass shifts that
 * put no port of theirs on another stack's (75 and 50 do; 100 would not: the test stack's S3 port is its Temporal
 * UI's plus 100); S3 and Redis are the shared test stack's unless `ownStores` (a test that
 * freezes them). The API and the worker run as real processes (node itself, not the tsx wrapper, so a SIGKILL
 * really kills them); the model server is the test's scripted one, reached through a proxy that can freeze.
 */
export async function startFaultStack(
  name: string,
  opts: { ownStores?: boolean; portShift?: number } = {},
): Promise<FaultStack> {
  // The stack scripts are ES modules without types: imported by path, typed here.
  const services = (await import(join(ROOT, 'stack', 'services.mjs'))) as {
    startStack: (opts: object) => Promise<StackHandle>;
  };
  const provision = (await import(join(ROOT, 'stack', 'provision.mjs'))) as {
    provision: (env: NodeJS.ProcessEnv) => object;
    STACK_DIR: string;
  };
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.MONGODB_URI;
  delete base.TEMPORAL_ADDRESS;
  if (opts.ownStores) {
    for (const key of Object.keys(base)) if (key.startsWith('S3_')) delete base[key];
    delete base.REDIS_URL;
  }
  base.STACK_PORT_OFFSET = String(Number(process.env.STACK_PORT_OFFSET ?? 0) + (opts.portShift ?? 50));
  const dataDir = join(provision.STACK_DIR, 'test-data', `${name}-${process.pid}-${Date.now()}`);
  mkdirSync(join(dataDir, 'logs'), { recursive: true });
  const stack = await services.startStack({
    profile: 'test',
    dataDir,
    bins: provision.provision(base),
    env: base,
  });

  const llm = await startScriptedLlm();
  const llmUrl = new URL(llm.baseURL);
  const llmProxy = await startTcpProxy(llmUrl.hostname, Number(llmUrl.port));
  llmUrl.port = String(llmProxy.port);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const processEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...stack.env,
    PORT: String(port),
    OPENAI_BASE_URL: llmUrl.href,
    OPENAI_API_KEY: llm.apiKey,
    LLM_PROVIDER: 'openai',
    TEMPORAL_TASK_QUEUE: `faults-${process.pid}-${randomBytes(4).toString('hex')}`,
    VALIDATE_RESPONSES: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL === 'silent' || !process.env.LOG_LEVEL ? 'warn' : process.env.LOG_LEVEL,
  };
  delete processEnv.INBOUND_SMTP_PORT;
  const config = loadConfig(processEnv);
  const deps = await createDeps(config, { logger: createLogger('silent') });
  const env = {
    config,
    deps,
    llm,
    app: url as unknown as Express,
    listen: () => Promise.resolve({ url }),
  } as unknown as TestEnv;

  let api: ChildProcess | undefined;
  let worker: ChildProcess | undefined;
  const startLogged = (entry: string, logName: string) => {
    const child = spawnEntry(entry, processEnv, ['ignore', 'pipe', 'pipe']);
    const log = createWriteStream(join(dataDir, 'logs', `${logName}.log`), { flags: 'a' });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    return child;
  };
  const health = async () => {
    try {
      const res = await fetch(`${url}/healthz`);
      return { status: res.status, body: (await res.json()) as { failing?: string[] } };
    } catch {
      return null;
    }
  };

  return {
    env,
    url,
    kill: stack.kill,
    restart: stack.restart,
    freeze: (server) => (server === 'model' ? llmProxy.freeze() : stack.signal(server, 'SIGSTOP')),
    thaw: (server) => (server === 'model' ? llmProxy.thaw() : stack.signal(server, 'SIGCONT')),
    stop: stack.stop,
    health,
    async startApi() {
      api = startLogged('api/server.ts', 'api');
      const child = api;
      await eventually(async () => {
        if (child.exitCode !== null)
          throw new Error(`the API exited (${child.exitCode}); see ${dataDir}/logs`);
        return (await health()) !== null;
      }, 120_000);
    },
    startWorker() {
      worker = startLogged('worker/main.ts', 'worker');
    },
    killApi: () => kill(api),
    killWorker: () => kill(worker),
    async close() {
      await Promise.all([kill(api), kill(worker)]);
      await closeDeps(deps).catch(() => undefined);
      await llmProxy.close();
      await llm.close();
      await stack.stop();
      if (!process.env.KEEP_TEST_DATA) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
