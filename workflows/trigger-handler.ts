import type { TriggerHandlerInput, TriggerHandlerOutcome } from '@contracts';
import { runHandler } from './run-handler';

/**
 * One handler's execution for one schedule fire (or, in deliveries recorded before handlers ran inline, a
 * webhook delivery), as a workflow of its own: see runHandler.
 */
export async function triggerHandlerWorkflow(input: TriggerHandlerInput): Promise<TriggerHandlerOutcome> {
  return runHandler(input);
}
