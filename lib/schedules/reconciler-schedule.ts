import { ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { WORKFLOWS, workflowIds, type ReconcileSchedulesWorkflow } from '@contracts';
import type { TemporalDeps } from '@lib/temporal/client';

/** How often the reconciler sweeps for trigger records whose Temporal Schedule may not match them. */
export const RECONCILE_EVERY = '1 minute';

/**
 * Creates the Schedule that runs the schedule reconciler on this task queue, unless it exists. The worker calls it
 * at start; one Schedule serves every worker of the queue.
 */
export async function ensureScheduleReconciler(temporal: TemporalDeps): Promise<string> {
  const scheduleId = workflowIds.reconcileSchedules(temporal.taskQueue);
  try {
    await temporal.client.schedule.create<ReconcileSchedulesWorkflow>({
      scheduleId,
      spec: { intervals: [{ every: RECONCILE_EVERY }] },
      action: {
        type: 'startWorkflow',
        workflowType: WORKFLOWS.reconcileSchedules,
        workflowId: scheduleId,
        taskQueue: temporal.taskQueue,
        args: [],
        workflowExecutionTimeout: '10 minutes',
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: RECONCILE_EVERY },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  return scheduleId;
}
