import { patched, workflowInfo } from '@temporalio/workflow';
import type { ScheduleFireInput } from '@contracts';
import { startHandlers } from './start-handlers';
import { triggerStore } from './trigger-activity-proxies';

/** The scheduled time Temporal appends to the id of a workflow a Schedule starts (`…-2025-01-01T09:00:00Z`). */
const SCHEDULED_TIME = /-(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)$/;

/**
 * One fire of a schedule trigger (started by its Temporal Schedule): every handler the trigger has runs as its
 * own workflow, whose id derives from this fire's (and so from the fire's scheduled time). A fire while the
 * organization's background work is at its bound runs none (its executions are recorded skipped).
 */
export async function scheduleFireWorkflow(input: ScheduleFireInput): Promise<{ handlers: number }> {
  const { workflowId, startTime } = workflowInfo();
  const firedAt = SCHEDULED_TIME.exec(workflowId)?.[1] ?? startTime.toISOString();
  const handlerIds = await triggerStore.loadScheduleFire(input);
  // Fires since the patch ask for room first (docs/admission.md); a refused one is recorded as skipped.
  if (
    patched('schedule-fire-admission') &&
    handlerIds.length &&
    !(await triggerStore.admitScheduleFire({ ...input, fireId: workflowId, firedAt }))
  )
    return { handlers: 0 };
  const handlers = await startHandlers(
    handlerIds.map((handlerId) => ({
      organizationId: input.organizationId,
      source: 'schedule' as const,
      parentId: input.triggerId,
      eventKey: firedAt,
      handlerId,
    })),
  );
  return { handlers };
}
