import { workflowInfo } from '@temporalio/workflow';
import { turnStore } from './activity-proxies';
import { runAgentLoop } from './agent-loop';
import type { AgentCallInput } from '@contracts';

/** An attached agent answering another agent's question, as a child workflow of the asking turn. */
export async function agentCallWorkflow(input: AgentCallInput): Promise<string> {
  const setup = await turnStore.loadAgentCall(input);
  return runAgentLoop(setup, {
    organizationId: input.organizationId,
    agentId: input.agentId,
    requestId: workflowInfo().workflowId,
    depth: input.depth,
  });
}
