import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/common';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
}

/**
 * How many times a call that found Temporal unreachable is tried (the SDK's backoff: 100 ms × 1.7ⁿ, ±20%). Six
 * rides out a frontend restart of about three seconds; the SDK's default of ten holds a request for ~20 s
 * before the API can answer 503 (README "When a dependency is down").
 */
const RPC_ATTEMPTS = 6;

/** The Temporal client the API uses; connects lazily so the API can start before Temporal is up. gRPC
 * reconnects by itself once Temporal is back. */
export function createTemporalClient(settings: TemporalSettings) {
  const connection = Connection.lazy({
    address: settings.address,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: RPC_ATTEMPTS }))],
  });
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
