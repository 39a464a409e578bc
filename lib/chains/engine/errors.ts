/**
 * What the chain-step engine throws. It knows nothing of Temporal: the chain activities map each to the failure
 * type the workflows know (see activities/chains/runs.ts).
 */

/** What a step's model calls cost before it failed: the failure carries it, so the calls are paid for. */
export interface Spent {
  modelCalls: number;
  usage: Array<{ model: string; promptTokens: number; completionTokens: number }>;
}

/** The step failed for good: the same state would fail it again, so it is not retried. */
export class StepFailed extends Error {
  constructor(
    message: string,
    readonly spent?: Spent,
  ) {
    super(message);
    this.name = 'StepFailed';
  }
}

/** The execution no longer owns its run (re-run or deleted): it stops without writing anything. */
export class RunSuperseded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunSuperseded';
  }
}

/** The model refused the request for good (a 4xx other than 408/409/429). */
export class ModelRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelRejected';
  }
}

/** The worker's copy of an execution was outdated: the step is run again on the state read afresh. */
export class StaleSnapshot extends Error {
  constructor() {
    super('the copy of the execution was outdated');
    this.name = 'StaleSnapshot';
  }
}

/** The model calls a failed step made (none when it failed before asking, or for another reason). */
export function spentBefore(err: unknown): Spent | null {
  return err instanceof StepFailed && err.spent ? err.spent : null;
}
