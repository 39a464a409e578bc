import type {
  ChainRunInput,
  ChainRunPlan,
  ChainStepInput,
  ChainStepOutcome,
  UnwrittenStep,
} from '@contracts';
import { workflowIds } from '@contracts';
import type { StepOutcome } from '@lib/chains/chain-run.schema';
import { runPlan } from '@lib/chains/run-plan';
import { askModel } from './ask-model';
import type { Attempt } from './attempt';
import type { StepBilling } from './billing';
import type { ChainEngineDeps } from './deps';
import { prepareElements } from './elements';
import { RunSuperseded, StaleSnapshot, StepFailed } from './errors';
import {
  readDefinition,
  snapshotOf,
  type ExecutionSnapshot,
  type State,
  type StepRun,
} from './execution-snapshot';
import { holds } from './guards';
import type { RunStore } from './run-store';
import { checkStateSize } from './state-size';
import { outputFields } from './step-outputs';
import { loadStepTools } from './step-tools';

/** A step whose new fields' JSON is longer waits for its result to be written: the history would carry them. */
export const MAX_UNWRITTEN_CHARS = 16 * 1024;

export type FinishRunInput = ChainRunInput & {
  status: 'success' | 'failed';
  statusMessage: string | null;
  failedStepId?: string;
  /** the model calls the failed step made before it failed (each one billed) */
  failedStepModelCalls?: number;
  /** a fan-out element failed the step: the calls of the elements that succeeded count too */
  failedInFanOut?: boolean;
  previous?: UnwrittenStep;
};

const failed = (detail: string, modelCalls = 0): ChainStepOutcome =>
  modelCalls ? { kind: 'failed', detail, modelCalls } : { kind: 'failed', detail };

/** Runs an execution's steps one at a time: guards, the model, the result written through a RunStore. */
export class StepRunner {
  constructor(
    private readonly deps: ChainEngineDeps,
    readonly store: RunStore,
    readonly billing: StepBilling,
  ) {}

  fanOutSettings() {
    return { batchSize: this.deps.chains.fanOutBatch, concurrency: this.deps.chains.fanOutConcurrency };
  }

  /** Marks a plan-less execution running and lists the steps it runs (runPlan); holds what it read. */
  async beginRun(input: ChainRunInput): Promise<ChainRunPlan> {
    const tenant = this.deps.repos.tenant(input.organizationId);
    const [run, definition, balance] = await Promise.all([
      tenant.chainRuns.markRunning(input.runId, input.generation),
      input.actionChainId ? readDefinition(tenant, input.actionChainId) : undefined,
      this.deps.credits.balance(input.organizationId),
    ]);
    if (!run) throw new RunSuperseded('the run was re-run or deleted');
    const [chain, all, attachments] =
      input.actionChainId === run.actionChainId
        ? definition!
        : [undefined, await tenant.chains.listSteps(run.actionChainId), []];
    if (chain) this.store.hold(input, snapshotOf(run, chain, all, attachments, balance));
    return { ...runPlan(all, run.stepResults, input.onlyStep), fanOut: this.fanOutSettings() };
  }

  /** The execution's run, chain and step: from the store's copy when given, else read. */
  async load(input: ChainStepInput, cached: ExecutionSnapshot | undefined): Promise<StepRun> {
    const snapshot = cached ?? (await this.store.read(input));
    const step = snapshot.steps.get(input.stepId);
    if (!step) throw new StepFailed('the step was deleted');
    return {
      tenant: this.deps.repos.tenant(input.organizationId),
      chain: snapshot.chain,
      step,
      attachments: snapshot.attachments.get(step._id) ?? [],
      runRef: snapshot.runRef,
      state: snapshot.state,
      stepResult: snapshot.stepResults[input.stepId],
      snapshot,
    };
  }

  /** The store's copy of an execution, unless this is a retried attempt (which reads afresh). */
  held(input: ChainRunInput, attempt: Attempt) {
    return attempt.retried ? undefined : this.store.held(input);
  }

  /** The tools of a step (`run`) of this execution; their calls are scoped by the execution and step. */
  loadTools(input: ChainStepInput, run: StepRun, attempt: Attempt) {
    const scope = `${workflowIds.chainRun(input.organizationId, input.runId, input.generation)}-${run.step._id}`;
    return loadStepTools(input.organizationId, run.attachments, run.runRef, scope, this.deps, attempt);
  }

  /** Fails the step when `json` is over CHAIN_STATE_MAX_BYTES. */
  checkStateSize(json: string, what: string) {
    checkStateSize(json, what, this.deps.chains.stateMaxBytes);
  }

  /** Records a step's success with its new state, unless failAfterRunningIf holds over that state. */
  async succeed(input: ChainStepInput, run: StepRun, fields: State, modelCalls: number) {
    const state = { ...run.state, ...fields };
    const { step } = run;
    if (step.failAfterRunningIf && (await holds('failAfterRunningIf', step.failAfterRunningIf, state)))
      return failed(`failAfterRunningIf held: ${step.failAfterRunningIf}`, modelCalls);
    await this.record(input, run, 'success', null, modelCalls, state);
    return { kind: 'success' as const };
  }

  /** Records how the step ended (and the new state), only over the state the step read (RunStore.record). */
  private async record(
    input: ChainStepInput,
    run: StepRun,
    outcome: StepOutcome,
    detail: string | null,
    modelCalls: number,
    state?: State,
  ) {
    const { step } = run;
    const result = {
      stepId: step._id,
      stepOrder: step.stepOrder,
      name: step.name,
      outcome,
      detail,
      modelCalls,
      generation: input.generation,
      finishedAt: new Date(),
    };
    const json = state && JSON.stringify(state);
    if (json) this.checkStateSize(json, "the run's state");
    await this.store.record(input, run.snapshot, result, state && json ? { value: state, json } : undefined);
  }

  /**
   * Returns a step's success before it is written, when the workflow hands it on to the execution's next
   * activity and the store writes behind; else writes it first.
   */
  private async handOnOrSucceed(input: ChainStepInput, run: StepRun, fields: State, modelCalls: number) {
    const { step, snapshot } = run;
    const mayHandOn =
      input.handsOnResults &&
      !input.finishesRun &&
      !step.failAfterRunningIf &&
      JSON.stringify(fields).length <= MAX_UNWRITTEN_CHARS;
    if (mayHandOn) {
      const value = { ...run.state, ...fields };
      const json = JSON.stringify(value);
      this.checkStateSize(json, "the run's state");
      const unwritten: UnwrittenStep = {
        stepId: step._id,
        stepOrder: step.stepOrder,
        name: step.name,
        modelCalls,
        finishedAt: new Date().toISOString(),
        fields,
        version: snapshot.version,
      };
      if (this.store.handOn(input, snapshot, unwritten, { value, json }))
        return { kind: 'success' as const, unwritten };
    }
    return this.succeed(input, run, fields, modelCalls);
  }

  /**
   * Before a step goes on: the last step's success is written, or, when the state moved on after that step read
   * it, that step is run again over the current state (as a step whose own write finds the state moved is).
   */
  private async settlePrevious(input: ChainStepInput, previous: UnwrittenStep, attempt: Attempt) {
    const settled = await this.store.writePrevious(input);
    if (settled === 'superseded') throw new RunSuperseded('the run was re-run or deleted');
    if (settled === 'written') return;
    const { organizationId, runId, generation, actionChainId } = input;
    const again = await this.runStep(
      { organizationId, runId, generation, actionChainId, stepId: previous.stepId },
      true,
      attempt,
    );
    if (again.kind === 'failed')
      throw new StepFailed(
        `step ${previous.stepOrder}${previous.name ? ` (${previous.name})` : ''}, asked again over the state as it is now, failed: ${again.detail}`,
      );
  }

  /**
   * Runs one step: its guards, then the model (or, for a fan-out step, stores its elements for the fan-out
   * workflows). A step recorded before returns what was recorded, without asking the model again. A copy of the
   * execution found stale is read afresh and the step run again, once.
   */
  async runChainStep(input: ChainStepInput, attempt: Attempt): Promise<ChainStepOutcome> {
    for (let fresh = attempt.retried; ; fresh = true) {
      try {
        return await this.settle(input, await this.runStep(input, fresh, attempt));
      } catch (err) {
        // Once only: a state read afresh is current.
        if (!(err instanceof StaleSnapshot) || fresh) throw err;
      }
    }
  }

  /** One attempt at a step, on the store's copy of the execution unless `fresh`. */
  private async runStep(input: ChainStepInput, fresh: boolean, attempt: Attempt): Promise<ChainStepOutcome> {
    if (input.previous) await this.settlePrevious(input, input.previous, attempt);
    const cached = fresh || input.marksRunning ? undefined : this.store.held(input);
    const credit = this.billing.creditCheck(input, cached);
    const run = await this.load(input, cached);
    const { step, state, stepResult } = run;
    if (stepResult?.generation === input.generation && stepResult.outcome !== 'failed')
      return { kind: stepResult.outcome };
    if (step.runIf && !(await holds('runIf', step.runIf, state))) {
      await this.record(input, run, 'skipped', `runIf did not hold: ${step.runIf}`, 0);
      return { kind: 'skipped' };
    }
    if (step.failBeforeRunningIf && (await holds('failBeforeRunningIf', step.failBeforeRunningIf, state)))
      return failed(`failBeforeRunningIf held: ${step.failBeforeRunningIf}`);
    if (step.forEachElement) {
      const prepared = await prepareElements(input, run, this.deps.chains.fanOutMax);
      if (prepared.kind === 'failed') return prepared;
      return { ...prepared, fanOut: this.fanOutSettings() };
    }
    const tools = await this.loadTools(input, run, attempt);
    const answer = await askModel(this.deps, this.billing, input, run, tools, credit, attempt);
    try {
      return await this.handOnOrSucceed(input, run, outputFields(step, answer.value), answer.modelCalls);
    } finally {
      // The run's end waits for it (finishRun), the last step's own payment included.
      this.billing.billLater(input, answer.usage, run.snapshot);
    }
  }

  /** A planned execution's last step ends the run once it succeeded or was skipped: no activity follows it. */
  async settle(input: ChainStepInput, outcome: ChainStepOutcome): Promise<ChainStepOutcome> {
    if (input.finishesRun && (outcome.kind === 'success' || outcome.kind === 'skipped'))
      await this.finishRun({ ...input, status: 'success', statusMessage: null });
    return outcome;
  }

  /** Ends the execution: records the failed step, if any, and the run's status. */
  async finishRun(input: FinishRunInput): Promise<void> {
    const { deps } = this;
    const tenant = deps.repos.tenant(input.organizationId);
    // A run shown ended is paid for (the steps that did not wait for their payments, on this worker) and has
    // its steps' results (the last one may have returned before it was written; if the state moved on after it
    // read it, it is left unwritten: a re-run asks it again). A superseded execution's writes below write nothing.
    await Promise.all([this.billing.settled(input), this.store.writePrevious(input)]);
    const actionChainId = input.actionChainId ?? (await tenant.chainRuns.get(input.runId))?.actionChainId;
    const step =
      actionChainId && input.failedStepId
        ? await tenant.chains.getStep(actionChainId, input.failedStepId)
        : null;
    const elementCalls =
      step && input.failedInFanOut
        ? (await tenant.chainRuns.elementOutputs(input.runId, step._id)).reduce((n, o) => n + o.modelCalls, 0)
        : 0;
    // A superseded execution writes nothing: the run is another execution's now.
    if (step)
      await tenant.chainRuns.recordStep(input.runId, input.generation, {
        stepId: step._id,
        stepOrder: step.stepOrder,
        name: step.name,
        outcome: 'failed',
        detail: input.statusMessage,
        modelCalls: (input.failedStepModelCalls ?? 0) + elementCalls,
        generation: input.generation,
        finishedAt: new Date(),
      });
    // The run's browser sessions end with it (no step of the execution runs any more), and before it is shown
    // ended: whoever sees the run ended finds its sessions stopped.
    if (actionChainId)
      await deps.runSessions.endFor(input.organizationId, {
        type: 'chain_run',
        actionChainId,
        runId: input.runId,
      });
    await tenant.chainRuns.finish(input.runId, input.generation, input.status, input.statusMessage);
    this.store.forget(input);
    deps.logger.info(
      { organizationId: input.organizationId, runId: input.runId, status: input.status },
      'chain run finished',
    );
  }
}
