import { randomBytes } from 'node:crypto';
import { NativeConnection, Runtime, Worker, type WorkerOptions, type WorkerTuner } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '@activities/index';
import { BrowserPool } from '@lib/browser-sessions/browser-pool';
import type { Deps } from '@lib/deps';
import { interactiveTaskQueue } from '@lib/temporal/client';
import { admissionSinks } from './admission-sink';
import { observabilityWorkerOptions } from './interceptors';
import { bundleWorkflows } from './workflow-bundle';

export interface WorkerSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  maxConcurrentActivities: number;
  maxConcurrentWorkflowTasks: number;
  /** Background slots are handed out only while the machine's CPU use is below this share (0–1). */
  backgroundTargetCpu: number;
  /** The slots of the interactive queue (chat turns), apart from the background ones above. */
  interactive: { maxConcurrentActivities: number; maxConcurrentWorkflowTasks: number };
}

/**
 * Background slots come from Temporal's resource-based tuner: a new one is handed out only while the machine's CPU
 * use is below the target (and memory below 90%), up to the configured maximums, never fewer than two. What waits,
 * waits in Temporal's queue, where fairness orders it by organization. The interactive queue keeps fixed slots: a
 * busy machine slows the backlog, not the turns (README "Admission"; holding turns back the same way made them
 * wait behind each other, measured with bench/neighbours.ts).
 */
function tuner(targetCpuUsage: number, maximum: { activities: number; workflowTasks: number }): WorkerTuner {
  const activities = { minimumSlots: 2, maximumSlots: maximum.activities };
  return {
    tunerOptions: { targetCpuUsage, targetMemoryUsage: 0.9 },
    workflowTaskSlotOptions: { minimumSlots: 2, maximumSlots: maximum.workflowTasks },
    activityTaskSlotOptions: activities,
    localActivityTaskSlotOptions: activities,
  };
}

/** The task queue only this worker process polls: actions of the browsers it holds are sent there. */
export const browserTaskQueue = (taskQueue: string, workerId: string) => `${taskQueue}-browser-${workerId}`;

/**
 * Builds the worker from config. Pass a prebuilt `workflowBundle` (tests) or it bundles `workflows/`. Three
 * Temporal workers share one connection and one workflow bundle:
 * - the background one on the configured queue (runs, deliveries, ingestions, analyses: workflows and activities);
 * - the interactive one on `<queue>-interactive` (chat turns and what they call), with slots of its own, so a
 *   full background backlog never holds a turn (README "Admission");
 * - one on this process's own browser queue (browser session actions, which must run where the browser is).
 * `worker.run()` runs them all; `worker.shutdown()` stops them all and ends every browser of the process.
 */
export async function createWorker(
  settings: WorkerSettings,
  deps: ActivityDeps & Pick<Deps, 'metrics' | 'tracing'>,
  source: Pick<WorkerOptions, 'workflowBundle' | 'debugMode' | 'reuseV8Context'> = {},
) {
  const workflowBundle =
    source.workflowBundle ??
    (await bundleWorkflows({ tracing: Boolean(deps.tracing), logger: Runtime.instance().logger }));
  const connection = await NativeConnection.connect({ address: settings.address });
  const browsers = new BrowserPool(browserTaskQueue(settings.taskQueue, randomBytes(6).toString('hex')), {
    ...deps.config.browser,
    outbound: deps.outbound,
    logger: deps.logger.child({ feature: 'browser' }),
  });
  const activities = createActivities(deps, browsers);
  // A prebuilt bundle (tests) must have been bundled with the tracing workflow modules for workflow spans.
  const observe = observabilityWorkerOptions(deps.metrics, deps.tracing);
  const common = {
    connection,
    namespace: settings.namespace,
    activities,
    ...observe,
    sinks: { ...observe.sinks, ...admissionSinks(deps.services.admission) },
    ...source,
    workflowBundle,
  };
  const background = await Worker.create({
    ...common,
    taskQueue: settings.taskQueue,
    tuner: tuner(settings.backgroundTargetCpu, {
      activities: settings.maxConcurrentActivities,
      workflowTasks: settings.maxConcurrentWorkflowTasks,
    }),
  });
  const interactive = await Worker.create({
    ...common,
    taskQueue: interactiveTaskQueue(settings.taskQueue),
    maxConcurrentActivityTaskExecutions: settings.interactive.maxConcurrentActivities,
    maxConcurrentWorkflowTaskExecutions: settings.interactive.maxConcurrentWorkflowTasks,
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
  const workers = [background, interactive, pinned];
  const worker = {
    async run() {
      try {
        // One stopping (for good or with an error) stops the others.
        const stopOthers = (err?: Error) => {
          worker.shutdown();
          if (err) throw err;
        };
        await Promise.all(workers.map((w) => w.run().then(() => stopOthers(), stopOthers)));
      } finally {
        await browsers.closeAll();
      }
    },
    shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
    getState: () => background.getState(),
  };
  return { worker, connection, browsers };
}
