import { condition, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  cancelTaskPlanSignal,
  frontendToolResultSignal,
  type CancelledPlans,
  type ChatToolCall,
  type EventTarget,
  type TurnInput,
  type TurnResult,
  type TurnSetup,
} from '@contracts';
import { callbacks, turnStore } from './activity-proxies';
import { failureReason, runAgentLoop } from './agent-loop';

export const FRONTEND_TOOL_TIMEOUT = '5 minutes';

/** Markers of changes to this workflow's shape (histories recorded before a change replay the old path). */
const PATCHES = {
  /** A turn whose setup fails for good (agent or conversation deleted) ends with an error reply. */
  setupFailureReply: 'turn-setup-failure-reply',
  /** A cancelled task plan stops the turn after its current task. */
  taskPlanCancel: 'turn-task-plan-cancel',
  /** A setup handed over in the input replaces loadTurn while it is fresh. */
  setupFromInput: 'turn-setup-from-input',
  /** After a cancel the step in progress finishes first; what the turn leaves in progress is then cancelled. */
  taskPlanCancelFinishesStep: 'turn-task-plan-cancel-finishes-step',
};

/**
 * How old a setup handed over in the input may be when the turn's first workflow task runs: a turn that waited
 * longer (no worker was up, a backlog) reads its agent and conversation again, so what changed meanwhile (an
 * agent deleted, its tools edited) counts, as it did before setups were handed over.
 */
export const INPUT_SETUP_FRESH_MS = 10_000;

/** The setup from the input when there is one and it is fresh (workflow time: the task's start, replayable). */
function inputSetup(input: TurnInput): TurnSetup | undefined {
  if (!input.setup) return undefined;
  if (Date.now() - workflowInfo().startTime.getTime() > INPUT_SETUP_FRESH_MS) return undefined;
  return patched(PATCHES.setupFromInput) ? input.setup : undefined;
}

/**
 * One chat turn: run the agent loop (deltas stream to the client; frontend tools wait durably for its result),
 * store the reply exactly once, then notify `callbackUrl`. Id: workflowIds.turn.
 */
export async function agentTurnWorkflow(input: TurnInput): Promise<TurnResult> {
  const frontendResults = new Map<string, unknown>();
  setHandler(frontendToolResultSignal, ({ toolCallId, result }) => {
    frontendResults.set(toolCallId, result);
  });
  // A cancel of a plan this turn works on: the loop stops before its next model call once no step of a
  // cancelled plan is in progress any more (the spec's "after the current task completes"). Behind patches: a
  // turn that got this signal under older code went on, and later code stopped at the next model call.
  const cancelled: CancelledPlans = { organizationId: input.organizationId, planIds: [] };
  setHandler(cancelTaskPlanSignal, ({ planId }) => {
    if (!cancelled.planIds.includes(planId)) cancelled.planIds.push(planId);
  });
  const shouldStop = async () => {
    if (!cancelled.planIds.length || !patched(PATCHES.taskPlanCancel)) return false;
    if (!patched(PATCHES.taskPlanCancelFinishesStep)) return true;
    return !(await turnStore.cancelledPlanStepUnderWay(cancelled));
  };
  const waitForFrontend = async (call: ChatToolCall): Promise<string> => {
    const arrived = await condition(() => frontendResults.has(call.id), FRONTEND_TOOL_TIMEOUT);
    const result = arrived
      ? frontendResults.get(call.id)
      : { error: 'the client did not return a result in time' };
    return typeof result === 'string' ? result : JSON.stringify(result ?? null);
  };

  let setup: TurnSetup | undefined;
  let text = '';
  let status: TurnResult['status'] = 'complete';
  try {
    setup = inputSetup(input) ?? (await turnStore.loadTurn({ ...input, setup: undefined }));
  } catch (err) {
    if (!patched(PATCHES.setupFailureReply)) throw err;
    status = 'error';
    text = `The agent could not reply: ${failureReason(err)}`;
  }
  // Without a setup the requester is the one waiting for the answer.
  const target: EventTarget = setup?.target ?? {
    organizationId: input.organizationId,
    conversationId: input.conversationId,
    userId: input.userId,
  };
  if (setup) {
    try {
      text = await runAgentLoop(setup, {
        organizationId: input.organizationId,
        agentId: input.agentId,
        requestId: input.requestId,
        depth: 0,
        target,
        waitForFrontend,
        shouldStop,
      });
    } catch (err) {
      status = 'error';
      text = `The agent could not reply: ${failureReason(err)}`;
    }
  }

  if (cancelled.planIds.length && patched(PATCHES.taskPlanCancelFinishesStep))
    await turnStore.endCancelledPlanSteps(cancelled);
  const message = await turnStore.saveReply({ target, requestId: input.requestId, text, status });
  if (input.callbackUrl) {
    try {
      await callbacks.postCallback({
        url: input.callbackUrl,
        payload: {
          organizationId: input.organizationId,
          conversationId: input.conversationId,
          agentId: input.agentId,
          requestId: input.requestId,
          status,
          message,
        },
      });
    } catch (err) {
      // The reply is stored and delivered; an unreachable callback must not turn the turn into a failure.
      await turnStore.emitTurnEvent({
        target,
        event: 'conversation',
        payload: { type: 'callback_failed', requestId: input.requestId, error: failureReason(err) },
      });
    }
  }
  return { messageId: message?.messageId ?? null, status };
}
