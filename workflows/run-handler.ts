import type { TriggerHandlerInput, TriggerHandlerOutcome } from '@contracts';
import { failureReason } from './agent-loop';
import { triggerStore } from './trigger-activity-proxies';

/**
 * Runs one handler for one schedule fire or webhook delivery: starts the handler's chain run or agent
 * conversation (idempotently: the run and request ids derive from the execution's record id, handlerRunId).
 * When the start still fails after its retries, the execution is recorded as failed.
 */
export async function runHandler(
  input: TriggerHandlerInput,
  store: {
    runTriggerHandler(input: TriggerHandlerInput): Promise<TriggerHandlerOutcome>;
    failTriggerHandler(input: TriggerHandlerInput, statusMessage: string): Promise<void>;
  } = triggerStore,
): Promise<TriggerHandlerOutcome> {
  try {
    return await store.runTriggerHandler(input);
  } catch (err) {
    const statusMessage = `the handler could not be started: ${failureReason(err)}`;
    await store.failTriggerHandler(input, statusMessage);
    return { status: 'failed', statusMessage };
  }
}
