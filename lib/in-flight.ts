/**
 * Work a caller started and did not wait for, kept until it is done so that someone can wait for all of it
 * (`settled()`, which never rejects: the work's own caller handles its failure).
 */
export class InFlight {
  private readonly running = new Set<Promise<void>>();

  /** Tracks `work`; `done` runs once it has ended and is no longer tracked. */
  add(work: Promise<unknown>, done?: () => void) {
    const tracked = work.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(tracked);
    void tracked.then(() => {
      this.running.delete(tracked);
      done?.();
    });
  }

  get size() {
    return this.running.size;
  }

  async settled(): Promise<void> {
    await Promise.all(this.running);
  }
}
