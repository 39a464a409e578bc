import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { FAILURES } from '@contracts';
import type { ChainActivities } from './activity-types';

const permanent = [FAILURES.chainStepFailed, FAILURES.chainRunSuperseded, FAILURES.llmRequestRejected];

// Run records and element bookkeeping: our own database, short and retried quickly. Local activities: no round
// trip through the Temporal server for what is a few reads and writes.
export const chainStore = proxyLocalActivities<ChainActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: permanent,
  },
});

// A step (or one element of a fan-out step): model calls and tool calls. The heartbeat hands it to another
// worker within 20 seconds when this one dies; model outages and rate limits are retried with growing pauses.
export const chainSteps = proxyActivities<ChainActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 6,
    nonRetryableErrorTypes: permanent,
  },
});
