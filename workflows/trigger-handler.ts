import type { TriggerHandlerInput, TriggerHandlerOutcome } from '@contracts';
import { failureReason } from './agent-loop';
import { triggerStore } from './trigger-activity-proxies';

/**
 * One handler's execution for one schedule fire or webhook delivery: starts the handler's chain run or agent
 * conversation (idempotently: the run and request ids derive from this execution). When the start still fails
 * after its retries, the execution is recorded as failed.
 */
export async function triggerHandlerWorkflow(input: TriggerHandlerInput): Promise<TriggerHandlerOutcome> {
  try {
    return await triggerStore.runTriggerHandler(input);
  } catch (err) {
    const statusMessage = `the handler could not be started: ${failureReason(err)}`;
    await triggerStore.failTriggerHandler(input, statusMessage);
    return { status: 'failed', statusMessage };
  }
}
