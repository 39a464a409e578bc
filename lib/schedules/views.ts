import { pickView } from '@lib/db/view';
import type { ScheduleHandlerDoc } from './schedule-handler.schema';
import type { ScheduleTriggerDoc } from './schedule-trigger.schema';

export function toTriggerView(t: ScheduleTriggerDoc) {
  return {
    triggerId: t._id,
    ...pickView(t, [
      'organizationId',
      'name',
      'description',
      'cronExpression',
      'confirmHighFrequency',
      'creatorUserId',
      'createdAt',
      'updatedAt',
    ]),
  };
}

export interface TargetNames {
  agent: (id: string | null | undefined) => string | null;
  chain: (id: string | null | undefined) => string | null;
}

export function toScheduleHandlerView(h: ScheduleHandlerDoc, names: TargetNames) {
  return {
    handlerId: h._id,
    ...pickView(h, [
      'triggerId',
      'organizationId',
      'handlerType',
      'agentId',
      'actionChainId',
      'workflowId',
      'instructions',
      'creatorUserId',
      'createdAt',
      'updatedAt',
    ]),
    agentName: names.agent(h.agentId),
    actionChainName: names.chain(h.actionChainId),
    workflowName: names.chain(h.workflowId),
    inputMapping: h.inputMappingJson ? (JSON.parse(h.inputMappingJson) as Record<string, string>) : null,
  };
}
