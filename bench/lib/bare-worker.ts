/**
 * The baseline worker of a bench: the bench's own workflow file (and activities, if any) on a task queue of its
 * own next to the service's, in this process. What it runs is the smallest version of what the service does.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import type { TemporalSettings } from '@lib/temporal/client';

/** The task queue the baseline worker of `temporal`'s service queue polls. */
export const bareTaskQueue = (temporal: Pick<TemporalSettings, 'taskQueue'>) => `${temporal.taskQueue}-bare`;

export async function startBareWorker(
  temporal: TemporalSettings,
  workflowsPath: string,
  activities: Record<string, (...args: never[]) => Promise<unknown>> = {},
) {
  const taskQueue = bareTaskQueue(temporal);
  const connection = await NativeConnection.connect({ address: temporal.address });
  const worker = await Worker.create({
    connection,
    namespace: temporal.namespace,
    taskQueue,
    workflowsPath,
    activities,
  });
  const running = worker.run();
  return {
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
