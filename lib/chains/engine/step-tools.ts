import { WORKFLOWS, workflowIds, type AgentCallInput, type ChatToolCall, type ModelTool } from '@contracts';
import type { AgentDoc } from '@lib/agents/agent.schema';
import type { StepAttachmentDoc } from '@lib/chains/step-attachment.schema';
import type { KbSearchService } from '@lib/knowledge-bases/kb-search.service';
import {
  hitsForModel,
  KB_SEARCH_TOOL,
  kbSearchModelTool,
  searchArgs,
} from '@lib/knowledge-bases/search-tool';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import { findTool, modelToolOf, resolveToolConfiguration } from '@lib/tools/registry';
import type { ToolRunDeps } from '@lib/tools/tool-spec';
import type { Attempt } from './attempt';

export interface StepToolDeps extends ToolRunDeps {
  knowledge: Pick<KbSearchService, 'searchForStep'>;
  temporal: TemporalDeps;
  /** The agents and knowledge bases a step's attachments name, whoever started the run: the attachment was
   * checked when it was made. */
  agents: { getMany(organizationId: string, agentIds: string[]): Promise<AgentDoc[]> };
  knowledgeBases: { titlesOf(organizationId: string, knowledgeBaseIds: string[]): Promise<string[]> };
}

const askParameters = {
  type: 'object',
  properties: { message: { type: 'string', description: 'What to ask or tell the agent' } },
  required: ['message'],
};

/** What a step's model may call, and how each call runs. */
export interface StepTools {
  tools: ModelTool[];
  /** Runs one call; a fan-out element passes its index, so elements' calls never share ids. */
  run(call: ChatToolCall, element?: number): Promise<string>;
}

/**
 * The tools of a step from its attachments: registry tools with their configuration, `search_knowledge_bases`
 * over its knowledge bases, and `ask_<agentId>` per attached agent (the agent answers in its own child
 * workflow, id derived from `callScope`, so a retried step finds the same answer). A tool that fails answers
 * the model with the error, as in agent turns.
 */
/** The chain run a step belongs to: its tools act for the member who started it. */
export interface StepRunRef {
  actionChainId: string;
  runId: string;
  startedByUserId: string;
}

export async function loadStepTools(
  organizationId: string,
  attachments: StepAttachmentDoc[],
  chainRun: StepRunRef,
  callScope: string,
  deps: StepToolDeps,
  attempt: Pick<Attempt, 'heartbeat'>,
): Promise<StepTools> {
  const { actionChainId } = chainRun;
  const configs = new Map<string, Record<string, unknown> | null>();
  const tools: ModelTool[] = [];
  const kbIds: string[] = [];
  const agentIds: string[] = [];
  for (const a of attachments) {
    if (a.kind === 'tool') {
      const tool = modelToolOf(a.targetId);
      if (!tool) continue;
      configs.set(a.targetId, resolveToolConfiguration(a.targetId, JSON.parse(a.configJson ?? '{}')));
      tools.push(tool);
    } else if (a.kind === 'knowledge-base') kbIds.push(a.targetId);
    else agentIds.push(a.targetId);
  }
  const [titles, agents] = attachments.length
    ? await Promise.all([
        kbIds.length ? deps.knowledgeBases.titlesOf(organizationId, kbIds) : [],
        agentIds.length ? deps.agents.getMany(organizationId, agentIds) : [],
      ])
    : [[], []];
  if (titles.length) tools.push(kbSearchModelTool(titles));
  const askTools = new Map<string, string>();
  for (const agent of agents) {
    const name = `ask_${agent.agentId}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
    askTools.set(name, agent.agentId);
    tools.push({
      name,
      description: `Ask the agent "${agent.name}" (${agent.description}).`,
      parameters: askParameters,
      executor: 'agent',
      targetAgentId: agent.agentId,
    });
  }
  async function ask(agentId: string, args: Record<string, unknown>, scope: string, callId: string) {
    const input: AgentCallInput = {
      organizationId,
      agentId,
      prompt: typeof args.message === 'string' ? args.message : JSON.stringify(args),
      depth: 1,
    };
    const workflowId = workflowIds.agentCall(scope, callId);
    // A retried step finds the answer of its first attempt, even when that call already finished.
    await startIdempotent(deps.temporal, WORKFLOWS.agentCall, {
      workflowId,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      attributes: { organizationId, agentId },
    });
    const beat = setInterval(() => attempt.heartbeat(), 2000);
    try {
      return (await deps.temporal.client.workflow.getHandle(workflowId).result()) as string;
    } finally {
      clearInterval(beat);
    }
  }

  async function run(call: ChatToolCall, scope: string): Promise<unknown> {
    const toolCallId = call.id;
    let args: Record<string, unknown>;
    try {
      args = call.arguments ? (JSON.parse(call.arguments) as Record<string, unknown>) : {};
    } catch {
      return { error: 'tool arguments are not valid JSON' };
    }
    if (call.name === KB_SEARCH_TOOL && titles.length) {
      const search = searchArgs(args);
      if (!search) return { error: `${KB_SEARCH_TOOL} needs a non-empty query` };
      return hitsForModel(
        await deps.knowledge.searchForStep(organizationId, kbIds, search.query, search.limit),
      );
    }
    const agentId = askTools.get(call.name);
    if (agentId) return ask(agentId, args, scope, call.id);
    const spec = findTool(call.name);
    const config = configs.get(call.name);
    if (!spec?.run || config === undefined)
      return { error: `tool ${call.name} is not attached to this step` };
    if (config === null)
      return { error: `the configuration of ${call.name} is no longer valid; update the attachment` };
    // The chain acts for its organization: its id stands in for the user, as an agent's does.
    return spec.run(
      {
        organizationId,
        agentId: `chain:${actionChainId}`,
        config,
        requestId: scope,
        toolCallId,
        chainRun: { actionChainId, runId: chainRun.runId, userId: chainRun.startedByUserId },
      },
      args,
      deps,
    );
  }

  return {
    tools,
    async run(call, element) {
      try {
        return JSON.stringify(await run(call, element === undefined ? callScope : `${callScope}-${element}`));
      } catch (err) {
        // A tool's refusal of its input and its failure alike: the model reads the message and may try again.
        return JSON.stringify({ error: (err as Error).message });
      }
    },
  };
}
