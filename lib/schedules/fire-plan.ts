import type { TriggerHandlerInput } from '@contracts';
import type { Tenants } from '@lib/db/tenants';
import type { SchedulesStore } from './store';
import type { HandlerPlan } from '@lib/triggers/handler-plan';

function mappingOf(json: string | null | undefined): Record<string, string> {
  return json ? (JSON.parse(json) as Record<string, string>) : {};
}

/** What a schedule handler does for the fire at `eventKey`. */
export function schedulePlan(repos: Tenants<SchedulesStore>) {
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
