// Message definitions and shared types of the turn workflow. The API imports this module to signal
// workflows, so it holds no workflow logic.
import { defineSignal } from '@temporalio/workflow';

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

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** server tools run as activities, frontend tools in the chat client, agent tools as a child workflow */
  executor: 'server' | 'frontend' | 'agent';
  targetAgentId?: string;
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
}

export interface TurnResult {
  messageId: string;
  status: 'complete' | 'error';
}

export interface FrontendToolResult {
  toolCallId: string;
  result: unknown;
}

/** A chat client returns the result of a frontend tool call. */
export const frontendToolResultSignal = defineSignal<[FrontendToolResult]>('frontendToolResult');
