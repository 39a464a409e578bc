import { executeChild, workflowInfo } from '@temporalio/workflow';
import { childSearchAttributes } from './search-attributes';
import {
  FAILURES,
  WORKFLOWS,
  workflowIds,
  type ChainFanOutInput,
  type ChainRunInput,
  type ChainRunPlan,
  type ChainRunResult,
  type ChainStepOutcome,
} from '@contracts';
import { failureReason } from './agent-loop';
import { chainSteps, chainStore } from './chain-activity-proxies';

function failureType(err: unknown): string | undefined {
  let e = err as { cause?: unknown; type?: string } | undefined;
  while (e) {
    if (e.type) return e.type;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** Runs a fan-out step's elements in slices, one child workflow per slice, one slice after another. */
async function fanOut(input: ChainRunInput, stepId: string, elements: number, plan: ChainRunPlan['fanOut']) {
  const parent = workflowInfo().workflowId;
  for (let from = 0; from < elements; from += plan.batchSize) {
    const slice: ChainFanOutInput = {
      ...input,
      stepId,
      from,
      to: Math.min(from + plan.batchSize, elements),
      concurrency: plan.concurrency,
    };
    await executeChild<(i: ChainFanOutInput) => Promise<void>>(WORKFLOWS.chainFanOut, {
      workflowId: workflowIds.chainFanOut(parent, stepId, from),
      args: [slice],
      typedSearchAttributes: childSearchAttributes(),
    });
  }
}

/**
 * One execution of a chain run (id: workflowIds.chainRun): each step an activity, in order; a fan-out step's
 * elements in child workflows. The run's state lives in the database, so the history holds only outcomes. A
 * step that fails ends the run `failed` with a message naming the step; a re-run resumes at that step.
 */
export async function chainRunWorkflow(input: ChainRunInput): Promise<ChainRunResult> {
  let plan: ChainRunPlan;
  try {
    plan = await chainStore.beginChainRun(input);
  } catch (err) {
    if (failureType(err) === FAILURES.chainRunSuperseded)
      return { status: 'failed', statusMessage: failureReason(err) };
    throw err;
  }
  for (const step of plan.steps) {
    let outcome: ChainStepOutcome;
    try {
      const stepInput = { ...input, stepId: step.stepId };
      outcome = await chainSteps.runChainStep(stepInput);
      if (outcome.kind === 'fan-out') {
        await fanOut(input, step.stepId, outcome.elements, plan.fanOut);
        outcome = await chainSteps.collectChainFanOut(stepInput);
      }
    } catch (err) {
      if (failureType(err) === FAILURES.chainRunSuperseded)
        return { status: 'failed', statusMessage: failureReason(err) };
      outcome = { kind: 'failed', detail: failureReason(err) };
    }
    if (outcome.kind === 'failed') {
      const statusMessage = `step ${step.stepOrder}${step.name ? ` (${step.name})` : ''} failed: ${outcome.detail}`;
      await chainStore.finishChainRun({
        ...input,
        status: 'failed',
        statusMessage,
        failedStepId: step.stepId,
      });
      return { status: 'failed', statusMessage };
    }
  }
  await chainStore.finishChainRun({ ...input, status: 'success', statusMessage: null });
  return { status: 'success', statusMessage: null };
}
