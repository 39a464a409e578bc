import { pickView, iso } from '@lib/db/view';
import type { ChainDoc, StepDoc } from './chain.schema';
import type { ChainRun } from './chain-runs.repository';
import type { AgentChainDoc, StepAttachmentDoc } from './step-attachment.schema';
import { redactConfiguration } from '@lib/tools/secrets';

const parsed = (json: string | null | undefined) => (json ? (JSON.parse(json) as object) : null);

/** A step's fields a client writes and reads as stored (the schemas aside, which are stored as JSON text). */
export const STEP_PLAIN_FIELDS = [
  'stepOrder',
  'name',
  'description',
  'instructions',
  'reasoning',
  'enabled',
  'showWholeChainState',
  'forEachElement',
  'toolChoice',
  'runIf',
  'failBeforeRunningIf',
  'failAfterRunningIf',
] as const;

export function toStepView(s: StepDoc) {
  return {
    stepId: s._id,
    actionChainId: s.actionChainId,
    ...pickView(s, [...STEP_PLAIN_FIELDS, 'createdAt', 'updatedAt']),
    inputSchema: parsed(s.inputSchemaJson),
    outputSchema: parsed(s.outputSchemaJson),
  };
}

export function toChainView(c: ChainDoc, steps?: StepDoc[]) {
  return {
    actionChainId: c._id,
    workflowId: c._id,
    ...pickView(c, [
      'organizationId',
      'name',
      'description',
      'llmInstructions',
      'inputType',
      'creatorUserId',
      'createdAt',
      'updatedAt',
    ]),
    ...(steps ? { steps: steps.map(toStepView) } : {}),
  };
}

export function toRunView(r: ChainRun) {
  return {
    runId: r._id,
    ...pickView(r, [
      'actionChainId',
      'organizationId',
      'triggerType',
      'status',
      'statusMessage',
      'generation',
      'startedByUserId',
      'createdAt',
      'updatedAt',
    ]),
    state: JSON.parse(r.stateJson) as Record<string, unknown>,
    steps: Object.values(r.stepResults ?? {})
      .sort((a, b) => a.stepOrder - b.stepOrder)
      .map((s) => ({ ...s, finishedAt: iso(s.finishedAt) })),
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
  };
}

export function toStepAttachmentView(a: StepAttachmentDoc) {
  const base = {
    organizationId: a.organizationId,
    actionChainId: a.actionChainId,
    stepId: a.stepId,
    createdAt: iso(a.createdAt),
  };
  if (a.kind === 'agent') return { ...base, agentId: a.targetId };
  if (a.kind === 'knowledge-base') return { ...base, knowledgeBaseId: a.targetId };
  return {
    ...base,
    toolCode: a.targetId,
    config: redactConfiguration(a.targetId, JSON.parse(a.configJson ?? '{}') as Record<string, unknown>),
  };
}

export function toAgentChainView(a: AgentChainDoc, name: string | null) {
  return {
    organizationId: a.organizationId,
    agentId: a.agentId,
    actionChainId: a.actionChainId,
    name,
    createdAt: iso(a.createdAt),
  };
}
