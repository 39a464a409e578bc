import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowClientInterceptor,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import type { Metrics } from '@lib/observability/metrics';
import type { Tracing } from '@lib/observability/tracing';
import { searchAttributePairs, type RunAttributes } from './contracts/search-attributes';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** The deadline of a call (TEMPORAL_RPC_TIMEOUT_MS), the long polls below excepted. */
  rpcTimeoutMs: number;
}

/** Calls that wait for an outcome on purpose (a result, an update's reply): the caller bounds them itself. */
const LONG_POLLS = new Set(
  ['GetWorkflowExecutionHistory', 'UpdateWorkflowExecution', 'PollWorkflowExecutionUpdate'].map(
    (method) => `/temporal.api.workflowservice.v1.WorkflowService/${method}`,
  ),
);

/**
 * A deadline on every call that has none (docs/operations.md "When a dependency is down"): a Temporal server that stops
 * answering on an open connection (frozen, partitioned) would otherwise hold the call, and the request, for
 * good. Outermost, so the retries of an unreachable server share it: the call fails with DEADLINE_EXCEEDED,
 * which the API answers with a 503.
 */
function deadlineInterceptor(timeoutMs: number): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(
      nextCall(
        options.deadline || LONG_POLLS.has(options.method_definition.path)
          ? options
          : { ...options, deadline: Date.now() + timeoutMs },
      ),
    );
}

/**
 * How many times a call that found Temporal unreachable is tried (the SDK's backoff: 100 ms × 1.7ⁿ, ±20%). Six
 * rides out a frontend restart of about three seconds; the SDK's default of ten holds a request for ~20 s
 * before the API can answer 503 (docs/operations.md "When a dependency is down").
 */
const RPC_ATTEMPTS = 6;

/** Counts the workflow starts this process asks for, by type and outcome (an already-started id included). */
function countStarts(metrics: Metrics): WorkflowClientInterceptor {
  return {
    async start(input, next) {
      try {
        const runId = await next(input);
        metrics.workflowStarts.inc({ workflow_type: input.workflowType, outcome: 'started' });
        return runId;
      } catch (err) {
        const outcome = err instanceof WorkflowExecutionAlreadyStartedError ? 'already_started' : 'failed';
        metrics.workflowStarts.inc({ workflow_type: input.workflowType, outcome });
        throw err;
      }
    },
  };
}

/**
 * The Temporal client the API uses; connects lazily so the API can start before Temporal is up, and gRPC
 * reconnects by itself once Temporal is back. With tracing on,
 * a start carries the caller's trace context to the workflow (OpenTelemetry client interceptor).
 */
export function createTemporalClient(
  settings: TemporalSettings,
  observe: { metrics?: Metrics; tracing?: Tracing } = {},
) {
  const connection = Connection.lazy({
    address: settings.address,
    interceptors: [
      deadlineInterceptor(settings.rpcTimeoutMs),
      makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: RPC_ATTEMPTS })),
    ],
  });
  const workflow: WorkflowClientInterceptor[] = [];
  if (observe.metrics) workflow.push(countStarts(observe.metrics));
  if (observe.tracing) workflow.push(observe.tracing.workflowClientInterceptor);
  const client = new Client({ connection, namespace: settings.namespace, interceptors: { workflow } });
  return { connection, client, taskQueue: settings.taskQueue };
}

export type TemporalDeps = ReturnType<typeof createTemporalClient>;

/** The queue of interactive work (chat turns): its own worker slots, so background work never delays it. */
export const interactiveTaskQueue = (taskQueue: string) => `${taskQueue}-interactive`;

/**
 * Task-queue fairness keyed by organization (docs/admission.md): within a queue, Temporal's matching service
 * dispatches each organization's backlog in turn, so one organization's queued work does not delay another's
 * first execution. Child workflows and activities inherit it.
 */
export const fairnessOf = (organizationId: string) => ({ fairnessKey: organizationId });

/**
 * Starts a workflow by deterministic id, tagged with the search attributes of what it belongs to (`attributes`:
 * the organization always, the agent, chain, knowledge base or trigger where one applies) and its organization's
 * fairness key, on the background queue unless it is `interactive`. An execution already running under that id
 * means this exact request was already accepted, which is success, not an error.
 */
export async function startIdempotent<W extends Workflow>(
  temporal: TemporalDeps,
  workflow: string,
  options: Omit<
    WorkflowStartOptions<W>,
    'taskQueue' | 'typedSearchAttributes' | 'searchAttributes' | 'priority'
  > & {
    attributes: RunAttributes;
    interactive?: boolean;
  },
): Promise<{ workflowId: string; alreadyStarted: boolean }> {
  const { attributes, interactive, ...start } = options;
  try {
    await temporal.client.workflow.start<W>(workflow, {
      ...start,
      taskQueue: interactive ? interactiveTaskQueue(temporal.taskQueue) : temporal.taskQueue,
      typedSearchAttributes: searchAttributePairs(attributes),
      priority: fairnessOf(attributes.organizationId),
    } as WorkflowStartOptions<W>);
    return { workflowId: options.workflowId, alreadyStarted: false };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return { workflowId: options.workflowId, alreadyStarted: true };
    throw err;
  }
}
