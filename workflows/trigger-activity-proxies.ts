import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { TriggerActivities } from './activity-types';

// Handler starts and fire bookkeeping: our own database and a workflow start. What cannot succeed (the target is
// gone, the payload does not fit) comes back as a `failed` outcome, not an error; errors are outages and are
// retried with growing pauses for about an hour before the handler's execution is recorded as failed.
const storeOptions = {
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 70,
  },
} as const;
export const triggerStore = proxyActivities<TriggerActivities>(storeOptions);

// The schedule reconciler: one sweep, retried briefly (the next sweep comes a minute later anyway).
export const reconcilerStore = proxyActivities<TriggerActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
});

// The same work as local activities, run in the worker that runs the workflow task: no round trip through the
// Temporal server per call. For what is short (a few reads and writes, a workflow start) in a workflow that runs
// it inline; retried like triggerStore (beyond a minute of retries a local activity waits on a timer).
export const triggerLocal = proxyLocalActivities<TriggerActivities>(storeOptions);
