import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  FAILURES,
  type AgentChainRunInput,
  type ChainElementInput,
  type ChainFanOutInput,
  type ChainRunInput,
  type ChainRunPlan,
  type ChainStepInput,
  type ChainStepOutcome,
} from '@contracts';
import { derivedRunId, type ChainRunsService } from '@lib/chains/chain-runs.service';
import type { Attempt } from '@lib/chains/engine/attempt';
import { StepBilling } from '@lib/chains/engine/billing';
import type { ChainEngineDeps } from '@lib/chains/engine/deps';
import { ModelRejected, RunSuperseded, StepFailed } from '@lib/chains/engine/errors';
import type { State } from '@lib/chains/engine/execution-snapshot';
import { FanOutRunner } from '@lib/chains/engine/fan-out';
import type { RunStore } from '@lib/chains/engine/run-store';
import { StepRunner, type FinishRunInput } from '@lib/chains/engine/step-runner';
import { WriteBehindRunStore } from '@lib/chains/engine/write-behind-run-store';
import { AppError } from '@lib/errors';

export interface ChainActivityDeps extends ChainEngineDeps {
  runs: Pick<ChainRunsService, 'createRun'>;
}

/** The attempt under way, as the engine is told of it (the heartbeat goes to the activity current when called). */
function currentAttempt(): Attempt {
  const context = Context.current();
  return {
    retried: context.info.attempt > 1,
    heartbeat: () => Context.current().heartbeat(),
    signal: context.cancellationSignal,
  };
}

/** The engine's errors as the failures the workflows know; anything else is retried as Temporal's policy says. */
function asFailure(err: unknown): unknown {
  if (err instanceof StepFailed)
    return ApplicationFailure.nonRetryable(
      err.message,
      FAILURES.chainStepFailed,
      ...(err.spent ? [err.spent] : []),
    );
  if (err instanceof RunSuperseded)
    return ApplicationFailure.nonRetryable(err.message, FAILURES.chainRunSuperseded);
  if (err instanceof ModelRejected)
    return ApplicationFailure.nonRetryable(err.message, FAILURES.llmRequestRejected);
  return err;
}

async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw asFailure(err);
  }
}

/**
 * The chain activities: each translates between Temporal and the chain-step engine (lib/chains/engine). `store`:
 * where the engine reads executions and writes step results (the worker's write-behind copy unless given).
 */
export function createChainActivities(deps: ChainActivityDeps, store?: RunStore) {
  const steps = new StepRunner(
    deps,
    store ?? new WriteBehindRunStore({ repos: deps.repos, logger: deps.logger }),
    new StepBilling(deps),
  );
  const elements = new FanOutRunner(deps, steps);

  return {
    /** Marks the execution running and lists the steps it runs (runPlan). Only executions started before runs
     * were planned at creation call it: their input has no plan. */
    beginChainRun(input: ChainRunInput): Promise<ChainRunPlan> {
      return translated(() => steps.beginRun(input));
    },

    /**
     * Runs one step: its guards, then the model (or, for a fan-out step, stores its elements for the fan-out
     * workflows). A retry after the step was recorded returns what was recorded, without asking the model again.
     */
    runChainStep(input: ChainStepInput): Promise<ChainStepOutcome> {
      return translated(() => steps.runChainStep(input, currentAttempt()));
    },

    /** The elements of [from, to) of a fan-out step that have no output yet. */
    pendingChainElements(input: ChainFanOutInput): Promise<number[]> {
      return elements.pending(input);
    },

    /** Runs a fan-out step for one element and stores its output (nothing goes back into the history). */
    runChainElement(input: ChainElementInput): Promise<void> {
      return translated(() => elements.runElement(input, currentAttempt()));
    },

    /** Joins a fan-out step's outputs to the state: each output field as an array in element order. */
    collectChainFanOut(input: ChainStepInput): Promise<ChainStepOutcome> {
      return translated(() => elements.collect(input, currentAttempt()));
    },

    /** The run an agent's chain tool call starts (its id derives from the call, so a retry finds it). */
    async createAgentChainRun(input: AgentChainRunInput): Promise<ChainRunInput> {
      let payload: unknown;
      try {
        payload = input.arguments ? JSON.parse(input.arguments) : {};
      } catch {
        throw ApplicationFailure.nonRetryable('the chain input is not valid JSON', FAILURES.toolInput);
      }
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
        throw ApplicationFailure.nonRetryable('the chain input must be a JSON object', FAILURES.toolInput);
      try {
        const { input: run } = await deps.runs.createRun(input.organizationId, {
          actionChainId: input.actionChainId,
          payload: payload as Record<string, unknown>,
          triggerType: 'agent',
          startedByUserId: `agent:${input.agentId}`,
          runId: derivedRunId(input.callKey),
        });
        return run;
      } catch (err) {
        // A chain deleted meanwhile, or an input that does not fit: the model reads why.
        if (err instanceof AppError && err.status < 500)
          throw ApplicationFailure.nonRetryable(err.message, FAILURES.toolInput);
        throw err;
      }
    },

    /** What the model reads of a finished run: how it ended and its state. */
    async chainRunOutcome(input: ChainRunInput) {
      const run = await deps.repos.tenant(input.organizationId).chainRuns.get(input.runId);
      if (!run) return { status: 'failed', statusMessage: 'the run was deleted' };
      return {
        runId: run._id,
        status: run.status,
        statusMessage: run.statusMessage,
        state: JSON.parse(run.stateJson) as State,
      };
    },

    /** The local activity that ends an execution its last step did not end: a failed one, one with no steps to
     * run, and every execution started without a plan. */
    finishChainRun(input: FinishRunInput): Promise<void> {
      return translated(() => steps.finishRun(input));
    },
  };
}
