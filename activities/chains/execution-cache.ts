import type { ChainRunInput } from '@contracts';
import { BoundedMap } from '@lib/bounded-map';
import { InFlight } from '@lib/in-flight';
import type { ChainDoc, StepDoc } from '@lib/chains/chain.schema';
import type { ChainRun } from '@lib/chains/chain-runs.repository';
import type { StepAttachmentDoc } from '@lib/chains/step-attachment.schema';
import type { StepOutcome } from '@lib/chains/chain-run.schema';
import type { StepRunRef } from './step-tools';

export type State = Record<string, unknown>;

/**
 * What a worker holds of one execution of a chain run between its steps, so that a step asks the model without
 * reading the database first: the run's state at `version` (its stateVersion), and the chain, its steps and
 * their attachments as they were read when the execution began (or when this worker first ran one of its steps).
 *
 * It is only a copy: every write of the state is conditional on `version` (recordStep with a stateVersion), so a copy that
 * another worker's write made stale is found out, read again, and the step run again on the current state. What
 * is found out later than with a read before every step: a run re-run or deleted meanwhile is noticed when the
 * step records its result (after its model call, which is charged); and edits of the chain, its steps or their
 * attachments while an execution runs may apply only from its next execution (a re-run).
 */
export interface ExecutionSnapshot {
  chain: ChainDoc;
  steps: Map<string, StepDoc>;
  attachments: Map<string, StepAttachmentDoc[]>;
  runRef: StepRunRef;
  state: State;
  stepResults: Record<string, { outcome: StepOutcome; generation: number }>;
  version: number;
  /** The length of the state's JSON: a copy of a large state is not kept (MAX_CACHED_STATE_CHARS). */
  stateChars: number;
  /** The organization's balance after this worker's last debit for the execution (undefined: not known). */
  balance?: number;
}

/** A run's stateVersion (runs written before it existed have none: version 0). */
export const stateVersionOf = (run: ChainRun) => (run as { stateVersion?: number }).stateVersion ?? 0;

export function snapshotOf(
  run: ChainRun,
  chain: ChainDoc,
  steps: StepDoc[],
  attachments: StepAttachmentDoc[],
  balance?: number,
): ExecutionSnapshot {
  const byStep = new Map<string, StepAttachmentDoc[]>();
  for (const a of attachments) byStep.set(a.stepId, [...(byStep.get(a.stepId) ?? []), a]);
  return {
    chain,
    steps: new Map(steps.map((s) => [s._id, s])),
    attachments: byStep,
    runRef: { actionChainId: run.actionChainId, runId: run._id, startedByUserId: run.startedByUserId },
    state: JSON.parse(run.stateJson) as State,
    stepResults: { ...run.stepResults },
    version: stateVersionOf(run),
    stateChars: run.stateJson.length,
    balance,
  };
}

/** Executions whose state's JSON is longer are read before every step: the cache holds at most 256 × 256 KB. */
export const MAX_CACHED_STATE_CHARS = 256 * 1024;

/** The snapshots of the executions this worker ran last (a bounded number, least recently used dropped). */
export class ExecutionCache {
  private readonly entries: BoundedMap<string, ExecutionSnapshot>;

  constructor(capacity = 256) {
    this.entries = new BoundedMap(capacity);
  }

  static key(input: ChainRunInput) {
    return `${input.organizationId}:${input.runId}:${input.generation}`;
  }

  get(input: ChainRunInput): ExecutionSnapshot | undefined {
    const key = ExecutionCache.key(input);
    const hit = this.entries.get(key);
    if (hit) this.entries.set(key, hit);
    return hit;
  }

  set(input: ChainRunInput, snapshot: ExecutionSnapshot) {
    const key = ExecutionCache.key(input);
    if (snapshot.stateChars > MAX_CACHED_STATE_CHARS) this.entries.delete(key);
    else this.entries.set(key, snapshot);
  }

  delete(input: ChainRunInput) {
    this.entries.delete(ExecutionCache.key(input));
  }
}

/**
 * The payments steps started for their execution and did not wait for (promises that never reject, see
 * billLater), kept until they are done so that the execution's next step and its end, on this worker, can wait
 * for them. An execution that goes on on another worker does not wait: a payment lands a round trip after its step.
 */
export class PendingPayments {
  private readonly pending = new Map<string, InFlight>();

  add(input: ChainRunInput, payment: Promise<void>) {
    const key = ExecutionCache.key(input);
    const payments = this.pending.get(key) ?? new InFlight();
    this.pending.set(key, payments);
    payments.add(payment, () => {
      if (payments.size === 0 && this.pending.get(key) === payments) this.pending.delete(key);
    });
  }

  async settled(input: ChainRunInput) {
    await this.pending.get(ExecutionCache.key(input))?.settled();
  }
}

/**
 * The writes of step results this worker did not wait for (see runChainStep), the last one per execution: a
 * promise of whether it was written (never rejects). The execution's next activity, on this worker, waits for it
 * before it goes on from the copy that took it as written.
 */
export class PendingWrites {
  // An execution that went on on another worker never ends here: past 1,024 the oldest is dropped.
  private readonly last = new BoundedMap<string, { stepId: string; written: Promise<boolean> }>(1024);

  add(input: ChainRunInput, stepId: string, written: Promise<boolean>) {
    this.last.set(ExecutionCache.key(input), { stepId, written });
  }

  /** Whether this worker wrote the step's result (false: it did not, or does not know). */
  async written(input: ChainRunInput, stepId: string): Promise<boolean> {
    const entry = this.last.get(ExecutionCache.key(input));
    return entry?.stepId === stepId ? entry.written : false;
  }

  delete(input: ChainRunInput) {
    this.last.delete(ExecutionCache.key(input));
  }
}
