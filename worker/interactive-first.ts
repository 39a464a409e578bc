import type { CustomSlotSupplier, SlotInfo, SlotPermit } from '@temporalio/worker';

/**
 * Interactive work first, in one worker process (docs/admission.md). Chat turns and background work share one
 * Temporal server, and a turn's tasks wait behind whatever the server is writing for the backlog (measured with
 * bench/neighbours.ts: a workflow with one no-op activity took 9× as long with a full backlog running). So while
 * a turn's task runs here, and for `holdMs` after the last one ended, the background workers of this process hold
 * at most `whileInteractive` slots of each kind instead of their maximum: the backlog slows down, it does not
 * stop, and it runs at full speed again once turns are quiet. Built on Temporal's slot suppliers: what waits,
 * waits in Temporal's queue, ordered there by fairness.
 */
export class InteractiveFirst {
  private running = 0;
  private quietSince = -Infinity;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly whileInteractive: number,
    private readonly holdMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a turn's task runs in this process, or ended less than `holdMs` ago. */
  get interactive(): boolean {
    return this.running > 0 || this.now() - this.quietSince < this.holdMs;
  }

  /** The slots of an interactive worker: at most `max`, each counted while it runs a task. */
  interactiveSlots<SI extends SlotInfo>(max: number): CustomSlotSupplier<SI> {
    return this.supplier<SI>(
      () => max,
      () => {
        this.running++;
      },
      () => {
        this.running--;
        if (this.running === 0) {
          this.quietSince = this.now();
          // Background slots held back are handed out once the hold has passed.
          setTimeout(() => this.wake(), this.holdMs).unref();
        }
      },
    );
  }

  /** The slots of a background worker: `max`, or `whileInteractive` while turns run here. */
  backgroundSlots<SI extends SlotInfo>(max: number): CustomSlotSupplier<SI> {
    return this.supplier<SI>(() => (this.interactive ? Math.min(this.whileInteractive, max) : max));
  }

  private wake() {
    for (const waiter of [...this.waiting]) waiter();
  }

  private supplier<SI extends SlotInfo>(
    limit: () => number,
    used: () => void = () => {},
    ended: () => void = () => {},
  ): CustomSlotSupplier<SI> {
    let reserved = 0;
    const take = (): SlotPermit | null => {
      if (reserved >= limit()) return null;
      reserved++;
      return {};
    };
    return {
      type: 'custom',
      reserveSlot: (_ctx, abortSignal) =>
        new Promise<SlotPermit>((resolve, reject) => {
          const attempt = () => {
            const permit = take();
            if (!permit) return;
            this.waiting.delete(attempt);
            abortSignal.removeEventListener('abort', abort);
            resolve(permit);
          };
          const abort = () => {
            this.waiting.delete(attempt);
            // The signal's own reason, whatever it is: the SDK logs an error for any other rejection of an
            // aborted reservation, which every shutdown of a waiting worker makes.
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
            reject(abortSignal.reason);
          };
          if (abortSignal.aborted) return abort();
          this.waiting.add(attempt);
          abortSignal.addEventListener('abort', abort, { once: true });
          attempt();
        }),
      tryReserveSlot: () => take(),
      markSlotUsed: () => used(),
      releaseSlot: (ctx) => {
        reserved--;
        if (ctx.slotInfo) ended();
        this.wake();
      },
    };
  }
}
