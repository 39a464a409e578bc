import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { join } from 'node:path';
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { workflowIds } from '@contracts';
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
  if (entry === 'worker/main.ts' && env.TEMPORAL_TASK_QUEUE) reconcilerQueues.add(env.TEMPORAL_TASK_QUEUE);
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

/** Task queues a worker process ran on: at start, worker/main.ts creates the schedule reconciler's Schedule there. */
const reconcilerQueues = new Set<string>();

/**
 * Deletes the reconciler Schedules worker processes created (after each test, test/setup.ts). Left behind, the
 * reconciler would run every minute on the shared test worker for the rest of the suite, syncing the trigger
 * records of whatever schedule test is running then. A worker still starting may create one after a test ends:
 * every later test deletes it again.
 */
export async function removeReconcilerSchedules(client: Client): Promise<void> {
  for (const queue of reconcilerQueues) {
    try {
      await client.schedule.getHandle(workflowIds.reconcileSchedules(queue)).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }
}

export const workerProcessesStarted = () => reconcilerQueues.size > 0;
