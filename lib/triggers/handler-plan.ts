import type { TriggerHandlerInput } from '@contracts';

/** What one handler does for one fire or delivery: open a conversation with an agent, or run a chain. */
export interface HandlerPlan {
  handlerType: string;
  creatorUserId: string;
  agent?: { agentId: string; title: string; message: string };
  chain?: { actionChainId: string; payload: Record<string, unknown> };
  /** Why this event cannot start the handler, however often it is tried (a mapping the delivery makes go over
   * a template budget): the execution is recorded failed with it, not retried. */
  refusal?: string;
}

/** The plan of a handler for one event, or null when the handler (or its schedule or webhook) is gone. */
export type PlanHandler = (input: TriggerHandlerInput) => Promise<HandlerPlan | null>;
