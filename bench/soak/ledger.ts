/** What the soak counts per kind of request, and a poll helper its operations share. */
import { performance } from 'node:perf_hooks';

export const KINDS = [
  'turn',
  'chain run',
  'webhook delivery',
  'schedule fire',
  'file',
  'table write',
  'app bridge',
] as const;
export type Kind = (typeof KINDS)[number];

export interface KindStats {
  /** the request that starts the work was answered 2xx */
  accepted: number;
  /** accepted, and the work reached its expected final state, checked through the API */
  completed: number;
  /** anything else: an unexpected answer, a wrong result, a timeout */
  failed: number;
  /** refused with 429 (admission or a limit): never accepted, so nothing is owed */
  refused: number;
  latenciesMs: number[];
  failures: string[];
}

/** Thrown by an operation that was refused with 429 before anything was accepted. */
export class Refused extends Error {}

export class Ledger {
  readonly stats = new Map<Kind, KindStats>(
    KINDS.map((k) => [
      k,
      { accepted: 0, completed: 0, failed: 0, refused: 0, latenciesMs: [], failures: [] },
    ]),
  );

  /** Runs one operation: `accept()` is called by it once its starting request was accepted. */
  async run(kind: Kind, op: (accept: () => void) => Promise<void>): Promise<void> {
    const s = this.stats.get(kind)!;
    const t0 = performance.now();
    try {
      await op(() => s.accepted++);
      s.completed++;
      s.latenciesMs.push(performance.now() - t0);
    } catch (err) {
      if (err instanceof Refused) s.refused++;
      else {
        s.failed++;
        if (s.failures.length < 5) s.failures.push(String(err instanceof Error ? err.message : err));
      }
    }
  }

  /** Completed operations that run workflows: all but table writes. */
  completedRunningWorkflows(): number {
    return [...this.stats].reduce((n, [kind, s]) => (kind === 'table write' ? n : n + s.completed), 0);
  }

  get failed(): number {
    return [...this.stats.values()].reduce((n, s) => n + s.failed, 0);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` every `everyMs` until it returns a value; rejects with `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 250,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

export function percentile(values: number[], q: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
