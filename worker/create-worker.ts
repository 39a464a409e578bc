import { randomBytes } from 'node:crypto';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '@activities/index';
import { BrowserPool } from '@lib/browser-sessions/browser-pool';
import type { Deps } from '@lib/deps';
import { observabilityWorkerOptions } from './interceptors';
import { bundlerOptions, workflowsPath } from './workflow-bundle';

export interface WorkerSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  maxConcurrentActivities: number;
  maxConcurrentWorkflowTasks: number;
}

/** The task queue only this worker process polls: actions of the browsers it holds are sent there. */
export const browserTaskQueue = (taskQueue: string, workerId: string) => `${taskQueue}-browser-${workerId}`;

/**
 * Builds the worker from config. Pass a prebuilt `workflowBundle` (tests) or it bundles `workflows/`. Two
 * Temporal workers share one connection: the main one on the configured queue (workflows and activities), and
 * one on this process's own browser queue (browser session actions, which must run where the browser is).
 * `worker.run()` runs both; `worker.shutdown()` stops both and ends every browser of the process.
 */
export async function createWorker(
  settings: WorkerSettings,
  deps: ActivityDeps & Pick<Deps, 'metrics' | 'tracing'>,
  source: Pick<
    WorkerOptions,
    'workflowBundle' | 'workflowsPath' | 'bundlerOptions' | 'debugMode' | 'reuseV8Context'
  > = {
    workflowsPath,
    bundlerOptions,
  },
) {
  const connection = await NativeConnection.connect({ address: settings.address });
  const browsers = new BrowserPool(browserTaskQueue(settings.taskQueue, randomBytes(6).toString('hex')), {
    ...deps.config.browser,
    outbound: deps.outbound,
    logger: deps.logger.child({ feature: 'browser' }),
  });
  const activities = createActivities(deps, browsers);
  // A prebuilt bundle (tests) must have been bundled with the tracing workflow modules for workflow spans.
  const observe = observabilityWorkerOptions(deps.metrics, deps.tracing);
  const main = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities,
    maxConcurrentActivityTaskExecutions: settings.maxConcurrentActivities,
    maxConcurrentWorkflowTaskExecutions: settings.maxConcurrentWorkflowTasks,
    ...observe,
    ...source,
  });
  const pinned = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: browsers.taskQueue,
    activities: {
      browserAct: (input: Parameters<typeof activities.browserAct>[0]) => activities.browserAct(input),
      closeBrowser: (input: Parameters<typeof activities.closeBrowser>[0]) => activities.closeBrowser(input),
    },
    maxConcurrentActivityTaskExecutions: settings.maxConcurrentActivities,
    interceptors: { activity: observe.interceptors?.activity },
  });
  const worker = {
    async run() {
      try {
        // One stopping (for good or with an error) stops the other.
        const stopOther = (err?: Error) => {
          worker.shutdown();
          if (err) throw err;
        };
        await Promise.all([
          main.run().then(() => stopOther(), stopOther),
          pinned.run().then(() => stopOther(), stopOther),
        ]);
      } finally {
        await browsers.closeAll();
      }
    },
    shutdown() {
      for (const w of [main, pinned]) if (w.getState() === 'RUNNING') w.shutdown();
    },
    getState: () => main.getState(),
  };
  return { worker, connection, browsers };
}
