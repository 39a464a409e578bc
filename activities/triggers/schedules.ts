import type { ScheduleFireInput, TriggerHandlerInput } from '@contracts';
import type { Logger } from '@lib/logger';
import type { Repositories } from '@lib/repositories';
import type { ScheduleSync } from '@lib/schedules/schedule-sync';
import type { HandlerPlan } from './handlers';

export interface ScheduleActivityDeps {
  repos: Repositories;
  sync: Pick<ScheduleSync, 'sync'>;
  logger: Logger;
}

/** Changes older than this are the reconciler's; newer ones are still being applied by their request. */
const RECONCILE_AFTER_MS = 30_000;
const RECONCILE_BATCH = 500;

function mappingOf(json: string | null | undefined): Record<string, string> {
  return json ? (JSON.parse(json) as Record<string, string>) : {};
}

/** What a schedule handler does for the fire at `eventKey`. */
export function schedulePlan(repos: Repositories) {
  return async (input: TriggerHandlerInput): Promise<HandlerPlan | null> => {
    const tenant = repos.tenant(input.organizationId);
    const [trigger, handler] = await Promise.all([
      tenant.scheduleTriggers.get(input.parentId),
      tenant.scheduleHandlers.get(input.parentId, input.handlerId),
    ]);
    if (!trigger || !handler) return null;
    const mapping = mappingOf(handler.inputMappingJson);
    const base = { handlerType: handler.handlerType, creatorUserId: handler.creatorUserId };
    if (handler.handlerType === 'agent') {
      const inputs = Object.keys(mapping).length ? `\n\nInputs: ${JSON.stringify(mapping)}` : '';
      return {
        ...base,
        agent: {
          agentId: handler.agentId!,
          title: `${trigger.name} (${input.eventKey})`,
          message: `${handler.instructions}${inputs}\n\n(Schedule "${trigger.name}", run of ${input.eventKey})`,
        },
      };
    }
    return {
      ...base,
      chain: {
        actionChainId: (handler.actionChainId ?? handler.workflowId)!,
        payload: { ...mapping, currentTimestamp: mapping.currentTimestamp ?? input.eventKey },
      },
    };
  };
}

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

    /** Applies every trigger record whose Schedule may not match it yet (see ScheduleSync). */
    async reconcileSchedules(
      opts: { olderThanMs?: number } = {},
    ): Promise<{ synced: number; pending: number }> {
      const due = await deps.repos.crossOrg.listScheduleTriggersToSyncCrossOrg(
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
