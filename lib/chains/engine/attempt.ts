/**
 * What the engine is told of the attempt running a step: the activity passes Temporal's facts in, so the engine
 * never reaches for the activity context itself.
 */
export interface Attempt {
  /** A retried attempt reads the run afresh: the attempt before it may have written it from another worker. */
  retried: boolean;
  /** Tells the orchestrator the worker is alive while a call says nothing for a while. */
  heartbeat(): void;
  /** Aborted when the attempt is cancelled. */
  signal?: AbortSignal;
}
