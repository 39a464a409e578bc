import type { ChainRunInput, ChainStepInput, UnwrittenStep } from '@contracts';
import type { StepOutcome, StepResult } from '@lib/chains/chain-run.schema';
import type { Logger } from '@lib/logger';
import type { Tenants } from '@lib/db/tenants';
import type { ChainsStore } from '@lib/chains/store';
import { ExecutionCache, MAX_CACHED_STATE_CHARS, PendingWrites } from './execution-cache';
import { readExecution, type ExecutionSnapshot } from './execution-snapshot';
import {
  refusedWrite,
  writeFromHistory,
  writeHandedOn,
  type NewState,
  type PreviousWrite,
  type RunStore,
} from './run-store';

/**
 * The worker keeps a copy of each execution between its steps (ExecutionCache), so a step asks the model without
 * reading the database first, and a step may return its success before it is written (handOn), the write
 * under way.
 *
 * It is only a copy: every write of the state is conditional on the version the copy read, so a copy that
 * another worker's write made stale is found out (StaleSnapshot), read again, and the step run again on the
 * current state. What is found out later than with a read before every step: a run re-run or deleted meanwhile
 * is noticed when the step records its result (after its model call, which is charged); and edits of the chain,
 * its steps or their attachments while an execution runs may apply only from its next execution (a re-run).
 */
export class WriteBehindRunStore implements RunStore {
  private readonly executions = new ExecutionCache();
  private readonly pendingWrites = new PendingWrites();

  constructor(private readonly deps: { repos: Tenants<ChainsStore>; logger: Logger }) {}

  held(input: ChainRunInput) {
    return this.executions.get(input);
  }

  async read(input: ChainStepInput) {
    const snapshot = await readExecution(this.deps.repos.tenant(input.organizationId), input);
    this.executions.set(input, snapshot);
    return snapshot;
  }

  hold(input: ChainRunInput, snapshot: ExecutionSnapshot) {
    this.executions.set(input, snapshot);
  }

  async record(input: ChainStepInput, snapshot: ExecutionSnapshot, result: StepResult, state?: NewState) {
    const runs = this.deps.repos.tenant(input.organizationId).chainRuns;
    if (!(await runs.recordStep(input.runId, input.generation, result, state?.json, snapshot.version))) {
      this.executions.delete(input);
      await refusedWrite(runs, input);
    }
    this.advance(input, snapshot, result.stepId, result.outcome, state);
  }

  handOn(input: ChainStepInput, snapshot: ExecutionSnapshot, step: UnwrittenStep, state: NewState) {
    this.advance(input, snapshot, step.stepId, 'success', state);
    const runs = this.deps.repos.tenant(input.organizationId).chainRuns;
    const written = writeHandedOn(runs, input, step, state.json).catch((err: unknown) => {
      this.deps.logger.warn(
        { err, organizationId: input.organizationId, runId: input.runId, stepId: step.stepId },
        "a chain step's result was not written; the execution's next activity writes it",
      );
      return false;
    });
    void written.then((saved) => saved || this.executions.delete(input));
    this.pendingWrites.add(input, step.stepId, written);
    return true;
  }

  /** By this worker's own write of it, else from the run as it is now plus what the step added. */
  async writePrevious(input: ChainRunInput & { previous?: UnwrittenStep }): Promise<PreviousWrite> {
    const { previous } = input;
    if (!previous || (await this.pendingWrites.written(input, previous.stepId))) return 'written';
    // This worker's copy of the execution took it as written.
    this.executions.delete(input);
    return writeFromHistory(this.deps.repos.tenant(input.organizationId).chainRuns, input, previous);
  }

  forget(input: ChainRunInput) {
    this.pendingWrites.delete(input);
    this.executions.delete(input);
  }

  /** The worker's copy of the execution after a step's result is written (or taken as written). */
  private advance(
    input: ChainRunInput,
    snapshot: ExecutionSnapshot,
    stepId: string,
    outcome: StepOutcome,
    state?: NewState,
  ) {
    snapshot.version++;
    snapshot.stepResults = { ...snapshot.stepResults, [stepId]: { outcome, generation: input.generation } };
    if (state) {
      snapshot.state = state.value;
      snapshot.stateChars = state.json.length;
      if (state.json.length > MAX_CACHED_STATE_CHARS) this.executions.delete(input);
    }
  }
}
