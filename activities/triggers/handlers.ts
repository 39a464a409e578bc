import type { TriggerHandlerInput, TriggerHandlerOutcome } from '@contracts';
import { TriggerHandlers, type TriggerHandlerDeps } from '@lib/triggers/trigger-handlers';

export function createTriggerHandlerActivities(deps: TriggerHandlerDeps) {
  const handlers = new TriggerHandlers(deps);
  return {
    /** Runs one handler for one schedule fire or webhook delivery, at most once (TriggerHandlers.run). */
    runTriggerHandler: (input: TriggerHandlerInput): Promise<TriggerHandlerOutcome> => handlers.run(input),

    /** Records an execution whose start failed through all its retries, and the chain run it could not start. */
    failTriggerHandler: (input: TriggerHandlerInput, statusMessage: string): Promise<void> =>
      handlers.fail(input, statusMessage),
  };
}
