import {
  ActivityFailure,
  ChildWorkflowFailure,
  executeChild,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import {
  WORKFLOWS,
  workflowIds,
  type AgentCallInput,
  type ChainRunWorkflow,
  type AgentLoopSetup,
  type ChatMessage,
  type ChatToolCall,
  type EventTarget,
  type ModelTool,
} from '@contracts';
import { model, tools, turnStore } from './activity-proxies';
import { childSearchAttributes } from './search-attributes';

export const MAX_TOOL_ROUNDS = 8;

/** Markers of changes to the loop's shape (histories recorded before a change replay the old path). */
const PATCHES = {
  /** Agent-call child ids derive from the parent workflow's id, since turn ids are scoped by conversation. */
  agentCallIdFromParent: 'agent-call-id-from-parent',
};
export const MAX_AGENT_DEPTH = 3;
/** The reply of a turn stopped by a cancelled task plan. */
export const STOPPED_REPLY = 'Stopped: the task plan was cancelled.';

export interface AgentLoopOptions {
  organizationId: string;
  agentId: string;
  requestId: string;
  depth: number;
  /** where events go; absent for agents called by other agents */
  target?: EventTarget;
  waitForFrontend?: (call: ChatToolCall) => Promise<string>;
  /** Asked before every model call: true ends the loop there, after the task under way (a cancelled plan). */
  shouldStop?: () => Promise<boolean>;
}

export function failureReason(err: unknown): string {
  if ((err instanceof ActivityFailure || err instanceof ChildWorkflowFailure) && err.cause)
    return failureReason(err.cause);
  return err instanceof Error ? err.message : String(err);
}

/**
 * The model/tool loop shared by chat turns and agent-to-agent calls: call the model, run the tools it asks for
 * in parallel, feed the results back, until it answers without tool calls. After MAX_TOOL_ROUNDS the model is
 * called without tools, so it must answer.
 */
export async function runAgentLoop(setup: AgentLoopSetup, opts: AgentLoopOptions): Promise<string> {
  const messages: ChatMessage[] = [...setup.messages];
  const byName = new Map(setup.tools.map((t) => [t.name, t]));

  const runTool = async (call: ChatToolCall): Promise<string> => {
    const tool = byName.get(call.name);
    if (!tool) return JSON.stringify({ error: `unknown tool ${call.name}` });
    if (opts.target) {
      await turnStore.emitTurnEvent({
        target: opts.target,
        event: 'conversation',
        payload: {
          type: 'tool_call',
          requestId: opts.requestId,
          toolCallId: call.id,
          name: call.name,
          arguments: call.arguments,
          executor: tool.executor,
        },
      });
    }
    try {
      if (tool.executor === 'frontend') {
        return opts.waitForFrontend
          ? await opts.waitForFrontend(call)
          : JSON.stringify({ error: 'no client to run this tool' });
      }
      if (tool.executor === 'agent') return await callAgent(tool, call, opts);
      if (tool.executor === 'chain') return await runChain(tool, call, opts);
      return await tools.runTool({
        organizationId: opts.organizationId,
        agentId: opts.agentId,
        requestId: opts.requestId,
        target: opts.target,
        call,
      });
    } catch (err) {
      return JSON.stringify({ error: failureReason(err) });
    }
  };

  for (let round = 0; ; round++) {
    if (await opts.shouldStop?.()) return STOPPED_REPLY;
    const out = await model.callModel({
      ...setup,
      tools: round < MAX_TOOL_ROUNDS ? setup.tools : [],
      messages,
      requestId: opts.requestId,
      target: opts.target,
      round,
    });
    if (!out.toolCalls.length) return out.content;
    messages.push({ role: 'assistant', content: out.content || null, toolCalls: out.toolCalls });
    const results = await Promise.all(out.toolCalls.map(runTool));
    out.toolCalls.forEach((call, i) =>
      messages.push({ role: 'tool', toolCallId: call.id, content: results[i]! }),
    );
  }
}

/** Runs an attached chain as a child workflow and answers with its outcome and state. */
async function runChain(tool: ModelTool, call: ChatToolCall, opts: AgentLoopOptions): Promise<string> {
  const input = await turnStore.createAgentChainRun({
    organizationId: opts.organizationId,
    agentId: opts.agentId,
    actionChainId: tool.targetChainId!,
    callKey: `${workflowInfo().workflowId}-${call.id}`,
    arguments: call.arguments,
  });
  await executeChild<ChainRunWorkflow>(WORKFLOWS.chainRun, {
    workflowId: workflowIds.chainRun(input.organizationId, input.runId, input.generation),
    args: [input],
    typedSearchAttributes: childSearchAttributes({ actionChainId: tool.targetChainId! }),
  });
  return JSON.stringify(await turnStore.chainRunOutcome(input));
}

async function callAgent(tool: ModelTool, call: ChatToolCall, opts: AgentLoopOptions): Promise<string> {
  if (opts.depth >= MAX_AGENT_DEPTH)
    return JSON.stringify({ error: 'agents may call each other at most 3 levels deep' });
  let prompt = call.arguments;
  try {
    const parsed = JSON.parse(call.arguments) as { message?: unknown };
    if (typeof parsed.message === 'string') prompt = parsed.message;
  } catch {
    // not JSON: pass the text through
  }
  const input: AgentCallInput = {
    organizationId: opts.organizationId,
    agentId: tool.targetAgentId!,
    prompt,
    depth: opts.depth + 1,
  };
  // Child ids follow the parent's id (unique per conversation); histories from before keep their old ids.
  const workflowId = patched(PATCHES.agentCallIdFromParent)
    ? workflowIds.agentCall(workflowInfo().workflowId, call.id)
    : workflowIds.agentCallV1(opts.organizationId, opts.requestId, call.id);
  const answer = await executeChild<(input: AgentCallInput) => Promise<string>>(WORKFLOWS.agentCall, {
    workflowId,
    args: [input],
    typedSearchAttributes: childSearchAttributes({ agentId: input.agentId }),
  });
  return answer;
}
