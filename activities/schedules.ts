import type { ScheduleFireAdmission, ScheduleFireInput } from '@contracts';
import { BacklogFullError, type Admission } from '@lib/admission/admission';
import { kindLabel } from '@lib/admission/kinds';
import type { SchedulesCrossOrg } from '@lib/schedules/schedule-sweep.repository';
import type { Tenants } from '@lib/db/tenants';
import type { Logger } from '@lib/logger';
import type { ScheduleSync } from '@lib/schedules/schedule-sync';
import type { SchedulesStore } from '@lib/schedules/store';
import type { TriggersStore } from '@lib/triggers/store';
import { recordSkipped } from '@lib/triggers/trigger-handlers';

export interface ScheduleActivityDeps {
  repos: Tenants<SchedulesStore & TriggersStore> & { scheduleSweep: SchedulesCrossOrg };
  admission: Pick<Admission, 'admit'>;
  sync: Pick<ScheduleSync, 'sync'>;
  logger: Logger;
}

/** Changes older than this are the reconciler's; newer ones are still being applied by their request. */
const RECONCILE_AFTER_MS = 30_000;
const RECONCILE_BATCH = 500;

export function createScheduleActivities(deps: ScheduleActivityDeps) {
  return {
    /** The handlers a fire runs; none when the trigger is gone (whose Schedule is then removed, if a failed
     * delete left it behind). */
    async loadScheduleFire(input: ScheduleFireInput): Promise<string[]> {
      const tenant = deps.repos.tenant(input.organizationId);
      const trigger = await tenant.scheduleTriggers.get(input.triggerId);
      if (!trigger) {
        await deps.sync.sync(input.organizationId, input.triggerId);
        return [];
      }
      return (await tenant.scheduleHandlers.all(input.triggerId)).map((h) => h._id);
    },

    /**
     * Room for one fire: its slot and room for the chain runs its handlers start. A fire beyond the
     * organization's bound runs no handler; each handler's execution for it is recorded `skipped`, with the bound
     * that was full, where the schedule's runs are read. True when the fire may go on.
     */
    async admitScheduleFire(input: ScheduleFireAdmission): Promise<boolean> {
      const { organizationId, triggerId, firedAt } = input;
      try {
        await deps.admission.admit(organizationId, 'schedule_fires', input.fireId, ['chain_runs']);
        return true;
      } catch (err) {
        if (!(err instanceof BacklogFullError)) throw err;
        const statusMessage =
          `skipped: the organization had ${err.limit} ${kindLabel(err.kind)} unfinished, its bound; ` +
          'this fire ran no handler';
        await recordSkipped(
          deps.repos,
          { organizationId, source: 'schedule', parentId: triggerId, eventKey: firedAt },
          await deps.repos.tenant(organizationId).scheduleHandlers.all(triggerId),
          statusMessage,
        );
        deps.logger.warn({ organizationId, triggerId, firedAt, kind: err.kind }, 'schedule fire skipped');
        return false;
      }
    },

    /** Applies every trigger record whose Schedule may not match it yet (see ScheduleSync). */
    async reconcileSchedules(
      opts: { olderThanMs?: number } = {},
    ): Promise<{ synced: number; pending: number }> {
      const due = await deps.repos.scheduleSweep.listScheduleTriggersToSyncCrossOrg(
        new Date(Date.now() - (opts.olderThanMs ?? RECONCILE_AFTER_MS)),
        RECONCILE_BATCH,
      );
      let synced = 0;
      for (const t of due) {
        try {
          if (await deps.sync.sync(t.organizationId, t._id)) synced++;
        } catch (err) {
          deps.logger.warn(
            { err, organizationId: t.organizationId, triggerId: t._id },
            'schedule sync failed',
          );
        }
      }
      if (due.length) deps.logger.info({ synced, pending: due.length - synced }, 'schedules reconciled');
      return { synced, pending: due.length - synced };
    },
  };
}
