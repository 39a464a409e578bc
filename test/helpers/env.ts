import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import { createApp } from '@api/app';
import { loadConfig, type Config } from '@lib/config';
import { closeDeps, createDeps, type Deps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { startSmtpReceiver, type SmtpReceiver } from './smtp';

export interface TestEnv {
  config: Config;
  deps: Deps;
  app: Express;
  smtp: SmtpReceiver;
}

let current: Promise<TestEnv> | undefined;

/**
 * The shared test environment: config from the stack `npm test` started, a real SMTP receiver, the app.
 * The task queue is unique per run so a stray worker elsewhere never takes these tasks.
 */
export function testEnv(): Promise<TestEnv> {
  current ??= (async () => {
    const smtp = await startSmtpReceiver();
    const config = loadConfig({
      ...process.env,
      SMTP_URL: smtp.url,
      TEMPORAL_TASK_QUEUE: `test-${process.pid}-${randomBytes(4).toString('hex')}`,
      JWT_SECRET: process.env.JWT_SECRET ?? randomBytes(32).toString('hex'),
      VALIDATE_RESPONSES: 'true',
    });
    const deps = await createDeps(config, createLogger(process.env.LOG_LEVEL ?? 'silent'));
    return { config, deps, app: createApp(deps), smtp };
  })();
  return current;
}

export async function closeTestEnv(): Promise<void> {
  if (!current) return;
  const env = await current;
  current = undefined;
  await closeDeps(env.deps);
  await env.smtp.close();
}
