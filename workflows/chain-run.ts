import { executeChild, patched, workflowInfo } from '@temporalio/workflow';
import { childSearchAttributes } from './search-attributes';
import {
  FAILURES,
  WORKFLOWS,
  workflowIds,
  type ChainFanOutInput,
  type ChainRunInput,
  type ChainRunPlan,
  type ChainRunResult,
  type ChainStepInput,
  type ChainStepOutcome,
  type FanOutSettings,
  type PlannedSteps,
  type UnwrittenStep,
} from '@contracts';
import { failureReason } from './agent-loop';
import { chainSteps, chainStore } from './chain-activity-proxies';
import { spentModelCalls } from './spent-model-calls';

function failureType(err: unknown): string | undefined {
  let e = err as { cause?: unknown; type?: string } | undefined;
  while (e) {
    if (e.type) return e.type;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** Runs a fan-out step's elements in slices, one child workflow per slice, one slice after another. */
async function fanOut(input: ChainRunInput, stepId: string, elements: number, plan: FanOutSettings) {
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

const PATCHES = {
  /** the plan comes with the input: no local activity begins or ends a run that succeeds (see below) */
  plannedExecution: 'chain-run-planned-execution',
};

/**
 * One execution of a chain run (id: workflowIds.chainRun): each step an activity, in order; a fan-out step's
 * elements in child workflows. The run's state lives in the database, so the history holds only outcomes. A
 * step that fails ends the run `failed` with a message naming the step; a re-run resumes at that step.
 *
 * An execution whose input brings its plan (planned when the run was created) has its first step mark the run
 * running and its last step end it: a successful run costs no local activity beyond its steps' activities.
 * Executions without one (started before plans) begin and end with a local activity each.
 *
 * A step may return its success before it is written (`unwritten`, small outputs only): the workflow hands it to
 * the execution's next activity (`previous`), which makes sure it is written before it goes on, so a result
 * lost with a worker is written from the history, and the step is not run again.
 */
export async function chainRunWorkflow(input: ChainRunInput): Promise<ChainRunResult> {
  return runExecution(input, input.plan !== undefined && patched(PATCHES.plannedExecution));
}

/** The execution chainRunWorkflow runs; `planned` when its input brings the plan, as it always does for a workflow
 * that runs a run's execution itself (a webhook delivery's: workflows/webhook-delivery.ts), which has no older
 * shape to replay and so needs no patch. */
export async function runExecution(input: ChainRunInput, planned: boolean): Promise<ChainRunResult> {
  // Steps and fan-out slices do not need the plan: it stays out of their inputs.
  const { plan: given, ...execution } = input;
  let plan: PlannedSteps & Partial<ChainRunPlan>;
  if (planned) plan = given!;
  else {
    try {
      plan = await chainStore.beginChainRun(input);
    } catch (err) {
      if (failureType(err) === FAILURES.chainRunSuperseded)
        return { status: 'failed', statusMessage: failureReason(err) };
      throw err;
    }
  }
  const last = plan.steps.length - 1;
  // The last step's success when its activity returned before writing it: the next activity writes it first.
  let previous: UnwrittenStep | undefined;
  for (const [i, step] of plan.steps.entries()) {
    let outcome: ChainStepOutcome;
    // still true after the catch when an element failed the step
    let fanningOut = false;
    try {
      const stepInput: ChainStepInput = {
        ...execution,
        stepId: step.stepId,
        handsOnResults: true,
        ...(planned && i === last ? { finishesRun: true } : {}),
        ...(previous ? { previous } : {}),
      };
      outcome = await chainSteps.runChainStep(
        planned && i === 0 ? { ...stepInput, marksRunning: true } : stepInput,
      );
      if (outcome.kind === 'fan-out') {
        fanningOut = true;
        await fanOut(execution, step.stepId, outcome.elements, (outcome.fanOut ?? plan.fanOut)!);
        fanningOut = false;
        outcome = await chainSteps.collectChainFanOut(stepInput);
      }
    } catch (err) {
      if (failureType(err) === FAILURES.chainRunSuperseded)
        return { status: 'failed', statusMessage: failureReason(err) };
      outcome = { kind: 'failed', detail: failureReason(err), modelCalls: spentModelCalls(err) };
    }
    if (outcome.kind === 'failed') {
      const statusMessage = `step ${step.stepOrder}${step.name ? ` (${step.name})` : ''} failed: ${outcome.detail}`;
      await chainStore.finishChainRun({
        ...execution,
        status: 'failed',
        statusMessage,
        failedStepId: step.stepId,
        ...(outcome.modelCalls ? { failedStepModelCalls: outcome.modelCalls } : {}),
        // the elements that succeeded hold their model calls with their outputs
        ...(fanningOut ? { failedInFanOut: true } : {}),
        ...(previous ? { previous } : {}),
      });
      return { status: 'failed', statusMessage };
    }
    previous = outcome.kind === 'fan-out' ? undefined : outcome.unwritten;
  }
  // A planned execution's last step has ended the run.
  if (!planned || last < 0)
    await chainStore.finishChainRun({
      ...execution,
      status: 'success',
      statusMessage: null,
      ...(previous ? { previous } : {}),
    });
  return { status: 'success', statusMessage: null };
}
