import type { ChainRunInput, ChainStepInput, UnwrittenStep } from '@contracts';
import type { StepResult } from '@lib/chains/chain-run.schema';
import type { ChainRunsRepository } from '@lib/chains/chain-runs.repository';
import { RunSuperseded, StaleSnapshot } from './errors';
import { stateVersionOf, type ExecutionSnapshot, type State } from './execution-snapshot';

/** A step's new state: the value and its JSON (computed once, its size checked by the caller). */
export interface NewState {
  value: State;
  json: string;
}

/** How the write of the last step's handed-on success (`previous`) went: see RunStore.writePrevious. */
export type PreviousWrite = 'written' | 'stale' | 'superseded';

/**
 * Where the engine reads an execution and writes its steps' results. Two implementations: WriteBehindRunStore
 * (the worker keeps a copy of each execution between its steps and may return a step's success before it is
 * written) and WriteThroughRunStore (every step reads the run, and every result is written before the step
 * returns).
 */
export interface RunStore {
  /** The copy of the execution this store holds between steps, if any (no read). */
  held(input: ChainRunInput): ExecutionSnapshot | undefined;
  /** Reads the execution (see readExecution) and holds it if this store holds copies. */
  read(input: ChainStepInput): Promise<ExecutionSnapshot>;
  /** Holds a copy read elsewhere (a plan-less execution's beginning), if this store holds copies. */
  hold(input: ChainRunInput, snapshot: ExecutionSnapshot): void;
  /**
   * Writes a step's result (and new state) over the state version `snapshot` read: throws StaleSnapshot when the
   * state moved on meanwhile, RunSuperseded when the execution no longer owns the run.
   */
  record(
    input: ChainStepInput,
    snapshot: ExecutionSnapshot,
    result: StepResult,
    state?: NewState,
  ): Promise<void>;
  /**
   * Takes a step's success as written and writes it without the step waiting; false when this store does not
   * (the caller then writes it with record). The execution's next activity makes sure it is written
   * (writePrevious).
   */
  handOn(input: ChainStepInput, snapshot: ExecutionSnapshot, step: UnwrittenStep, state: NewState): boolean;
  /**
   * Makes sure the success the execution's last step handed on (`previous`) is written. `stale`: not written,
   * because the state moved on after the step read it; `superseded`: the execution no longer owns the run.
   */
  writePrevious(input: ChainRunInput & { previous?: UnwrittenStep }): Promise<PreviousWrite>;
  /** The execution ended: whatever is held of it goes. */
  forget(input: ChainRunInput): void;
}

/** Writes a step's success handed on (`unwritten`) with the new state, at the version the step read. */
export function writeHandedOn(
  runs: ChainRunsRepository,
  input: ChainRunInput,
  step: UnwrittenStep,
  stateJson: string,
) {
  return runs.recordStep(
    input.runId,
    input.generation,
    {
      stepId: step.stepId,
      stepOrder: step.stepOrder,
      name: step.name,
      outcome: 'success',
      detail: null,
      modelCalls: step.modelCalls,
      generation: input.generation,
      finishedAt: new Date(step.finishedAt),
    },
    stateJson,
    step.version,
  );
}

/** Why a conditional write of a step's result wrote nothing: the state moved on, or the run is not ours. */
export async function refusedWrite(runs: ChainRunsRepository, input: ChainRunInput): Promise<never> {
  const now = await runs.get(input.runId);
  if (now?.generation === input.generation) throw new StaleSnapshot();
  throw new RunSuperseded('the run was re-run or deleted');
}

/** Writes a handed-on success from the run as it is now plus what the step added (from the history). */
export async function writeFromHistory(
  runs: ChainRunsRepository,
  input: ChainRunInput,
  previous: UnwrittenStep,
): Promise<PreviousWrite> {
  const run = await runs.get(input.runId);
  if (run?.generation !== input.generation) return 'superseded';
  if (run.stepResults[previous.stepId]?.generation === input.generation) return 'written';
  if (stateVersionOf(run) !== previous.version) return 'stale';
  const state = { ...(JSON.parse(run.stateJson) as State), ...previous.fields };
  if (await writeHandedOn(runs, input, previous, JSON.stringify(state))) return 'written';
  // Written meanwhile by another attempt, or the run re-run: read again.
  throw new StaleSnapshot();
}
