import { randomBytes } from 'node:crypto';
import {
  NativeConnection,
  Runtime,
  Worker,
  type SlotInfo,
  type SlotSupplier,
  type TunerHolder,
  type WorkerOptions,
} from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '@activities/index';
import { BrowserPool } from '@lib/browser-sessions/browser-pool';
import type { Deps } from '@lib/deps';
import { interactiveTaskQueue } from '@lib/temporal/client';
import { admissionSinks } from './admission-sink';
import { InteractiveFirst } from './interactive-first';
import { observabilityWorkerOptions } from './interceptors';
import { bundleWorkflows } from './workflow-bundle';

export interface WorkerSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  maxConcurrentActivities: number;
  maxConcurrentWorkflowTasks: number;
  /** Workflows each queue's worker keeps cached between tasks (WORKER_MAX_CACHED_WORKFLOWS). */
  maxCachedWorkflows: number;
  /** Background slots of each kind while a turn runs in this process (worker/interactive-first.ts). */
  backgroundSlotsWhileInteractive: number;
  /** The slots of the interactive queue (chat turns), apart from the background ones above. */
  interactive: { maxConcurrentActivities: number; maxConcurrentWorkflowTasks: number };
}

/** Slots of a worker: workflow tasks and activities from `slots`, local activities fixed (they run inside a
 * workflow task, which already holds a slot of the same worker). */
function tuner(
  slots: <SI extends SlotInfo>(max: number) => SlotSupplier<SI>,
  maximum: { activities: number; workflowTasks: number },
): TunerHolder {
  return {
    workflowTaskSlotSupplier: slots(maximum.workflowTasks),
    activityTaskSlotSupplier: slots(maximum.activities),
    localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: maximum.activities },
    nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
  };
}

/** How long after a turn's last task the background stays held back: turns come one after another. */
const INTERACTIVE_HOLD_MS = 1000;

/** The task queue only this worker process polls: actions of the browsers it holds are sent there. */
export const browserTaskQueue = (taskQueue: string, workerId: string) => `${taskQueue}-browser-${workerId}`;

/**
 * Builds the worker from config. Pass a prebuilt `workflowBundle` (tests) or it bundles `workflows/`. Three
 * Temporal workers share one connection and one workflow bundle:
 * - the background one on the configured queue (runs, deliveries, ingestions, analyses: workflows and activities);
 * - the interactive one on `<queue>-interactive` (chat turns and what they call), with slots of its own; while
 *   it runs a task, the background one holds few slots (worker/interactive-first.ts, docs/admission.md);
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
    // Bounded: the SDK's default follows the heap limit (thousands on this machine's 4 GB), and Temporal's core
    // evicts only when a place is needed, so finished workflows stay in memory until then (docs/operations.md).
    maxCachedWorkflows: settings.maxCachedWorkflows,
  };
  const first = new InteractiveFirst(settings.backgroundSlotsWhileInteractive, INTERACTIVE_HOLD_MS);
  const background = await Worker.create({
    ...common,
    taskQueue: settings.taskQueue,
    tuner: tuner((max) => first.backgroundSlots(max), {
      activities: settings.maxConcurrentActivities,
      workflowTasks: settings.maxConcurrentWorkflowTasks,
    }),
  });
  const interactive = await Worker.create({
    ...common,
    taskQueue: interactiveTaskQueue(settings.taskQueue),
    tuner: tuner((max) => first.interactiveSlots(max), {
      activities: settings.interactive.maxConcurrentActivities,
      workflowTasks: settings.interactive.maxConcurrentWorkflowTasks,
    }),
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
  // The two workflow workers, read by operators' checks and tests (their compiled options).
  return { worker, connection, browsers, workflowWorkers: [background, interactive] };
}
