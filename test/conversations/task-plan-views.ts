// How the task-plan tests (task-plans, task-plan-execution) read plans from tool results and events.
import type { ChatRequest } from '@test/helpers/llm';
import { type ReceivedEvent } from '@test/helpers/realtime';

export interface PlanView {
  planId: string;
  conversationId: string;
  type: string;
  status: string;
  requestId: string;
  steps: Array<{ stepId: string; description: string; status: string }>;
}

/** The JSON result of the n-th tool call the model has been shown. */
export const toolResult = (body: ChatRequest, n = 0) =>
  JSON.parse(
    (body.messages.filter((m) => m.role === 'tool')[n] as { content: string }).content,
  ) as PlanView & {
    error?: string;
  };

export const planEvents = (events: ReceivedEvent[]) => events.filter((e) => e.event === 'task-plan');
