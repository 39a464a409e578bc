import type { ChainRunInput, ChainStepInput, UnwrittenStep } from '@contracts';
import type { StepResult } from '@lib/chains/chain-run.schema';
import type { Tenants } from '@lib/db/tenants';
import type { ChainsStore } from '@lib/chains/store';
import { readExecution, type ExecutionSnapshot } from './execution-snapshot';
import {
  refusedWrite,
  writeFromHistory,
  type NewState,
  type PreviousWrite,
  type RunStore,
} from './run-store';

/**
 * The plain store: every step reads the run, chain, steps and attachments, and every result is written before
 * the step returns (a workflow's `handsOnResults` is ignored: outcomes never carry `unwritten`). A handed-on
 * success from a write-behind worker of the same execution is still written from the history.
 */
export class WriteThroughRunStore implements RunStore {
  constructor(private readonly repos: Tenants<ChainsStore>) {}

  held(): undefined {
    return undefined;
  }

  read(input: ChainStepInput): Promise<ExecutionSnapshot> {
    return readExecution(this.repos.tenant(input.organizationId), input);
  }

  hold(): void {}

  async record(input: ChainStepInput, snapshot: ExecutionSnapshot, result: StepResult, state?: NewState) {
    const runs = this.repos.tenant(input.organizationId).chainRuns;
    if (!(await runs.recordStep(input.runId, input.generation, result, state?.json, snapshot.version)))
      await refusedWrite(runs, input);
  }

  handOn(): false {
    return false;
  }

  async writePrevious(input: ChainRunInput & { previous?: UnwrittenStep }): Promise<PreviousWrite> {
    if (!input.previous) return 'written';
    return writeFromHistory(this.repos.tenant(input.organizationId).chainRuns, input, input.previous);
  }

  forget(): void {}
}
