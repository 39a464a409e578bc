// The baselines of bench/webhooks.ts and bench/turns.ts: the smallest durable units of work.
import { proxyActivities } from '@temporalio/workflow';

const { noopActivity } = proxyActivities<{ noopActivity(n: number): Promise<number> }>({
  startToCloseTimeout: '1 minute',
});

/** A workflow that starts and completes. */
export async function bareNoopWorkflow(n: number): Promise<number> {
  return Promise.resolve(n);
}

/** A workflow that runs one activity doing nothing (the worker must register `noopActivity`), then completes. */
export async function bareActivityWorkflow(n: number): Promise<number> {
  return noopActivity(n);
}
