import type { ChainRunInput } from '@contracts';
import { BoundedMap } from '@lib/bounded-map';
import type { ExecutionSnapshot } from './execution-snapshot';

/** An execution's key in a worker's bookkeeping: one execution of one run. */
export const executionKey = (input: ChainRunInput) =>
  `${input.organizationId}:${input.runId}:${input.generation}`;

/** Executions whose state's JSON is longer are read before every step: the cache holds at most 256 × 256 KB. */
export const MAX_CACHED_STATE_CHARS = 256 * 1024;

/** The snapshots of the executions this worker ran last (a bounded number, least recently used dropped). */
export class ExecutionCache {
  private readonly entries: BoundedMap<string, ExecutionSnapshot>;

  constructor(capacity = 256) {
    this.entries = new BoundedMap(capacity);
  }

  get(input: ChainRunInput): ExecutionSnapshot | undefined {
    const key = executionKey(input);
    const hit = this.entries.get(key);
    if (hit) this.entries.set(key, hit);
    return hit;
  }

  set(input: ChainRunInput, snapshot: ExecutionSnapshot) {
    const key = executionKey(input);
    if (snapshot.stateChars > MAX_CACHED_STATE_CHARS) this.entries.delete(key);
    else this.entries.set(key, snapshot);
  }

  delete(input: ChainRunInput) {
    this.entries.delete(executionKey(input));
  }
}

/**
 * The writes of step results this worker did not wait for (see WriteBehindRunStore), the last one per execution: a
 * promise of whether it was written (never rejects). The execution's next activity, on this worker, waits for it
 * before it goes on from the copy that took it as written.
 */
export class PendingWrites {
  // An execution that went on on another worker never ends here: past 1,024 the oldest is dropped.
  private readonly last = new BoundedMap<string, { stepId: string; written: Promise<boolean> }>(1024);

  add(input: ChainRunInput, stepId: string, written: Promise<boolean>) {
    this.last.set(executionKey(input), { stepId, written });
  }

  /** Whether this worker wrote the step's result (false: it did not, or does not know). */
  async written(input: ChainRunInput, stepId: string): Promise<boolean> {
    const entry = this.last.get(executionKey(input));
    return entry?.stepId === stepId ? entry.written : false;
  }

  delete(input: ChainRunInput) {
    this.last.delete(executionKey(input));
  }
}
