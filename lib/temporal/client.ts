import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/common';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
}

/** The Temporal client the API uses; connects lazily so the API can start before Temporal is up. */
export function createTemporalClient(settings: TemporalSettings) {
  const connection = Connection.lazy({ address: settings.address });
  const client = new Client({ connection, namespace: settings.namespace });
  return { connection, client, taskQueue: settings.taskQueue };
}

export type TemporalDeps = ReturnType<typeof createTemporalClient>;

/**
 * Starts a workflow by deterministic id. An execution already running under that id means this exact
 * request was already accepted, which is success, not an error.
 */
export async function startIdempotent<W extends Workflow>(
  temporal: TemporalDeps,
  workflow: string,
  options: Omit<WorkflowStartOptions<W>, 'taskQueue'>,
): Promise<{ workflowId: string; alreadyStarted: boolean }> {
  try {
    await temporal.client.workflow.start<W>(workflow, {
      ...options,
      taskQueue: temporal.taskQueue,
    } as WorkflowStartOptions<W>);
    return { workflowId: options.workflowId, alreadyStarted: false };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return { workflowId: options.workflowId, alreadyStarted: true };
    throw err;
  }
}
