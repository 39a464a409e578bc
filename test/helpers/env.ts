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

let current: Promise<TestEnv> | undefined;
let cleanup: Array<() => Promise<void>> = [];

/**
 * The shared test environment: config from the stack `npm test` started, a real SMTP receiver, the scripted
 * LLM, the app. The task queue is unique per run so a stray worker elsewhere never takes these tasks.
 */
export function testEnv(): Promise<TestEnv> {
  current ??= (async () => {
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
    );
    return { config, deps, app, smtp, llm, listen };
  })();
  return current;
}

/**
 * After each test: the shared scripted LLM forgets what the test scripted, so a rule left behind (say one
 * answering every request for a model) cannot answer a later file's requests.
 */
export async function forgetTestScript(): Promise<void> {
  if (current) (await current).llm.forgetScript();
}

export async function closeTestEnv(): Promise<void> {
  if (!current) return;
  const env = await current;
  current = undefined;
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup = [];
  await closeDeps(env.deps);
}
