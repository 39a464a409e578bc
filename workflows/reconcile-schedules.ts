import { reconcilerStore } from './trigger-activity-proxies';

/** One sweep of the schedule reconciler (its own Schedule runs it every minute): applies every trigger record
 * whose Temporal Schedule may not match it yet. */
export async function reconcileSchedulesWorkflow(): Promise<{ synced: number; pending: number }> {
  return reconcilerStore.reconcileSchedules();
}
