import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { join } from 'node:path';
import type { TestEnv } from './env';

export const ROOT = join(__dirname, '..', '..');

/** The environment of a service process spawned from a test: the stack's, plus the test env's task queue,
 * scripted LLM, mail receiver and signing key (so tokens the test signs are valid there too). */
export function childProcessEnv(env: TestEnv): NodeJS.ProcessEnv {
  // The stack's INBOUND_SMTP_PORT is not passed on: replicas would compete for the one port.
  const rest = { ...process.env };
  delete rest.INBOUND_SMTP_PORT;
  return {
    ...rest,
    TEMPORAL_TASK_QUEUE: env.config.temporal.taskQueue,
    OPENAI_BASE_URL: env.config.llm.baseUrl,
    OPENAI_API_KEY: env.config.llm.apiKey,
    LLM_PROVIDER: env.config.llm.provider,
    SMTP_URL: env.config.mail.smtpUrl,
    JWT_SECRET: env.config.auth.jwtSecret,
    LOG_LEVEL: 'silent',
  };
}

/** A service entry point (`api/server.ts`, `worker/main.ts`) as its own process. node itself, not the tsx
 * wrapper (which would outlive a SIGKILL in its child), so a signal or a kill reaches the service. */
export function spawnEntry(
  entry: string,
  env: NodeJS.ProcessEnv,
  stdio: StdioOptions = 'ignore',
): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, entry)], { cwd: ROOT, stdio, env });
}

/** The real worker entry point as its own process, on the test env's task queue. */
export function startWorkerProcess(env: TestEnv): ChildProcess {
  return spawnEntry('worker/main.ts', childProcessEnv(env));
}

/** SIGTERM (the process's own shutdown), then waits for the exit; at once if it has exited already. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
