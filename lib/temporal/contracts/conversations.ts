import type { SignalDefinition } from '@temporalio/common';

/** Where a turn's realtime events go (see lib/realtime/rooms.ts). */
export interface EventTarget {
  organizationId: string;
  conversationId: string;
  /** the conversation's creator */
  userId: string;
}

export interface ChatToolCall {
  id: string;
  name: string;
  /** JSON text, as the model produced it */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ChatToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A tool as the model sees it, and who runs it. */
export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** server tools run as activities, frontend tools in the chat client, agent tools and chain tools as a child
   * workflow */
  executor: 'server' | 'frontend' | 'agent' | 'chain';
  targetAgentId?: string;
  targetChainId?: string;
}

export interface AgentCallInput {
  organizationId: string;
  /** the attached agent being asked */
  agentId: string;
  prompt: string;
  /** how many agent calls deep this is; calls stop at MAX_AGENT_DEPTH */
  depth: number;
}

export interface TurnInput {
  organizationId: string;
  conversationId: string;
  agentId: string;
  requestId: string;
  userId: string;
  callbackUrl?: string;
  frontendTools?: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }>;
  /** What loadTurn would read, when the API has just read and written all of it (a turn that opens a
   * conversation): the workflow starts the model call at once. Used only while fresh (turn.ts). */
  setup?: TurnSetup;
}

export interface TurnResult {
  /** null when the conversation was deleted before the reply could be stored */
  messageId: string | null;
  status: 'complete' | 'error';
}

export interface FrontendToolResult {
  toolCallId: string;
  result: unknown;
}

/** A chat client returns the result of a frontend tool call. (What `defineSignal` builds, without importing
 * the workflow library into the API.) */
export const frontendToolResultSignal = {
  type: 'signal',
  name: 'frontendToolResult',
} as SignalDefinition<[FrontendToolResult], 'frontendToolResult'>;

/** The user cancelled a task plan this turn works on: the turn stops after its current task. */
export interface CancelTaskPlan {
  planId: string;
}

export const cancelTaskPlanSignal = {
  type: 'signal',
  name: 'cancelTaskPlan',
} as SignalDefinition<[CancelTaskPlan], 'cancelTaskPlan'>;

/** The plans a turn was told are cancelled. */
export interface CancelledPlans {
  organizationId: string;
  planIds: string[];
}

/** The model settings and context a loop of model calls and tool calls starts from. */
export interface AgentLoopSetup {
  model: string;
  temperature: number;
  reasoning?: string;
  messages: ChatMessage[];
  tools: ModelTool[];
}

/** What loadTurn gives the turn workflow: the loop's setup and where its events go. */
export interface TurnSetup extends AgentLoopSetup {
  target: EventTarget;
}

/** One model call: the loop's setup with the messages and tools of this round. */
export interface ModelCall extends AgentLoopSetup {
  requestId: string;
  target?: EventTarget;
  /** The model call's place in the turn, 0, 1, … (absent in histories recorded before it was passed: 0). */
  round?: number;
}

export interface ModelReply {
  content: string;
  toolCalls: ChatToolCall[];
}

/** One server tool call of an agent. */
export interface ToolCallInput {
  organizationId: string;
  agentId: string;
  requestId: string;
  target?: EventTarget;
  call: ChatToolCall;
}

export type TurnWorkflow = (input: TurnInput) => Promise<TurnResult>;
export type AgentCallWorkflow = (input: AgentCallInput) => Promise<string>;
