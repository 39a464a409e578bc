import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from './activity-proxies';

// Handler starts and fire bookkeeping: our own database and a workflow start. What cannot succeed (the target is
// gone, the payload does not fit) comes back as a `failed` outcome, not an error; errors are outages and are
// retried with growing pauses for about an hour before the handler's execution is recorded as failed.
export const triggerStore = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 70,
  },
});

// The schedule reconciler: one sweep, retried briefly (the next sweep comes a minute later anyway).
export const reconcilerStore = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
});
