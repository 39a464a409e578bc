import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createApp, createHttpServer } from '@api/app';
import { attachRealtime } from '@api/realtime';
import { loadConfig, type Config } from '@lib/config';
import { closeDeps, createDeps, type Deps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { startScriptedLlm, type ScriptedLlm } from './llm';
import { startSmtpReceiver, type SmtpReceiver } from './smtp';

export interface TestEnv {
  config: Config;
  deps: Deps;
  app: Express;
  smtp: SmtpReceiver;
  llm: ScriptedLlm;
  /** The app and socket.io on a real loopback port (started on first use). */
  listen: () => Promise<{ url: string }>;
}

const envs = new Map<string, Promise<TestEnv>>();
let cleanup: Array<() => Promise<void>> = [];

/**
 * The shared test environment: config from the stack `npm test` started, a real SMTP receiver, the scripted
 * LLM, the app. The task queue is unique per run so a stray worker elsewhere never takes these tasks.
 */
export function testEnv(): Promise<TestEnv> {
  return variant('scripted', {});
}

/**
 * The test environment with the local model (LLM_PROVIDER=local, LOCAL_LLM_MODEL_PATH from `npm test`) as its
 * chat provider, beside the shared one: its own deps, app and task queue. The scripted LLM still runs (its key
 * is set, which LLM_PROVIDER=local overrides) but answers nothing.
 */
export function localModelTestEnv(): Promise<TestEnv> {
  return variant('local', { LLM_PROVIDER: 'local' });
}

/**
 * A test environment of its own whose task queue no worker polls: for a suite that starts workflows only to see
 * the API accept them (the authorization matrix), so a later suite's worker on the shared queue never runs them.
 */
export function unpolledTestEnv(): Promise<TestEnv> {
  // What it starts stays unfinished for good: its organizations' admission bounds must never be what answers.
  const unbounded = String(1_000_000);
  return variant('unpolled', {
    ADMISSION_MAX_WEBHOOK_DELIVERIES: unbounded,
    ADMISSION_MAX_CHAIN_RUNS: unbounded,
    ADMISSION_MAX_INGESTIONS: unbounded,
    ADMISSION_MAX_SCHEDULE_FIRES: unbounded,
    ADMISSION_MAX_ANALYSES: unbounded,
  });
}

function variant(name: string, overrides: NodeJS.ProcessEnv): Promise<TestEnv> {
  let env = envs.get(name);
  if (!env) {
    env = createTestEnv(overrides);
    envs.set(name, env);
  }
  return env;
}

async function createTestEnv(overrides: NodeJS.ProcessEnv): Promise<TestEnv> {
  const [smtp, llm] = await Promise.all([startSmtpReceiver(), startScriptedLlm()]);
  const config = loadConfig({
    ...process.env,
    SMTP_URL: smtp.url,
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: llm.apiKey,
    ALLOW_PRIVATE_OUTBOUND: 'true',
    TEMPORAL_TASK_QUEUE: `test-${process.pid}-${randomBytes(4).toString('hex')}`,
    JWT_SECRET: process.env.JWT_SECRET ?? randomBytes(32).toString('hex'),
    VALIDATE_RESPONSES: 'true',
    ...overrides,
  });
  const deps = await createDeps(config, { logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
  const app = createApp(deps);
  let listening: Promise<{ url: string }> | undefined;
  const listen = () =>
    (listening ??= (async () => {
      const server = createHttpServer(app);
      const realtime = attachRealtime(server, deps);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanup.push(() => realtime.close());
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    })());
  cleanup.push(
    () => smtp.close(),
    () => llm.close(),
    () => closeDeps(deps),
  );
  return { config, deps, app, smtp, llm, listen };
}

/**
 * After each test: the scripted LLMs forget what the test scripted, so a rule left behind (say one
 * answering every request for a model) cannot answer a later file's requests.
 */
export async function forgetTestScript(): Promise<void> {
  for (const env of envs.values()) (await env).llm.forgetScript();
}

export async function closeTestEnv(): Promise<void> {
  if (envs.size === 0) return;
  await Promise.allSettled(envs.values());
  envs.clear();
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup = [];
}
