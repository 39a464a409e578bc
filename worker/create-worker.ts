import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '@activities/index';
import { bundlerOptions, workflowsPath } from './workflow-bundle';

export interface WorkerSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  maxConcurrentActivities: number;
  maxConcurrentWorkflowTasks: number;
}

/** Builds the worker from config. Pass a prebuilt `workflowBundle` (tests) or it bundles `workflows/`. */
export async function createWorker(
  settings: WorkerSettings,
  deps: ActivityDeps,
  source: Pick<
    WorkerOptions,
    'workflowBundle' | 'workflowsPath' | 'bundlerOptions' | 'debugMode' | 'reuseV8Context'
  > = {
    workflowsPath,
    bundlerOptions,
  },
) {
  const connection = await NativeConnection.connect({ address: settings.address });
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: createActivities(deps),
    maxConcurrentActivityTaskExecutions: settings.maxConcurrentActivities,
    maxConcurrentWorkflowTaskExecutions: settings.maxConcurrentWorkflowTasks,
    ...source,
  });
  return { worker, connection };
}
