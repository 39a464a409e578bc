import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { FAILURES } from '@contracts';
import type { TurnActivities } from './activity-types';

// Reads and writes of our own database: short and retried quickly. Local activities run in the worker that
// runs the workflow task, with no round trip through the Temporal server (a turn needs half the server work).
export const turnStore = proxyLocalActivities<TurnActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 10,
  },
});

// Model calls stream for a while; the heartbeat notices a dead worker within seconds. 429/5xx/timeouts retry
// with backoff; a request the model rejects (4xx) does not.
export const model = proxyActivities<TurnActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 6,
    nonRetryableErrorTypes: [FAILURES.llmRequestRejected],
  },
});

export const tools = proxyActivities<TurnActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumAttempts: 3,
    nonRetryableErrorTypes: [FAILURES.toolInput],
  },
});

export const callbacks = proxyActivities<TurnActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '10 minutes',
    maximumAttempts: 12,
    nonRetryableErrorTypes: [FAILURES.callbackRefused],
  },
});
