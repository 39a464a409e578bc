import { Context } from '@temporalio/activity';

/**
 * Where an activity records that an attempt of its risky work has started and not finished: one string on a
 * record the activity owns (for the parse activity, the file's `parseAttempt`). Writes must be durable before
 * the work starts: that is the point.
 */
export interface CrashMarkerStore {
  read(): Promise<string | null>;
  write(marker: string | null): Promise<void>;
}

/** Two attempts of this activity, the second under its strict budget, started the work and never finished it. */
export class CrashedBefore extends Error {
  constructor(readonly attempt: number) {
    super(
      `attempt ${attempt} stopped in the middle of this work without finishing (its worker process died), ` +
        'as an earlier attempt had',
    );
    this.name = 'CrashedBefore';
  }
}

/**
 * Runs `work` so that a poison pill cannot crash attempt after attempt (issue 32: the parse activity was retried
 * five times into the same out-of-memory abort, so one upload took down up to five workers).
 *
 * Before the work a marker naming this activity execution and attempt is written; after it (success, failure
 * or cancellation alike) it is cleared. Only a process that dies in between leaves it behind: Temporal then times
 * the attempt out (heartbeat timeout) and schedules the next one, which finds the marker of an earlier attempt.
 * A worker also dies for reasons that are not the input's (a deploy, a node lost), so that attempt runs the work
 * once more, under the caller's strict budget (`work(true)`), and marks itself strict; an attempt that finds a
 * strict attempt's marker throws CrashedBefore instead of running the work a third time. The caller turns that
 * into its final failure (a non-retryable ApplicationFailure with a reason a person can act on).
 *
 * Heartbeat details would carry a marker too, but the SDK throttles and batches heartbeats, so neither the
 * "started" nor the "finished" beat is sure to reach the server before a crash or a failure: a store the
 * activity writes and awaits is.
 */
export async function withCrashMarker<T>(
  store: CrashMarkerStore,
  work: (strict: boolean) => Promise<T>,
): Promise<T> {
  const info = Context.current().info;
  const run = info.workflowExecution;
  const execution = `${run?.workflowId ?? '-'}/${run?.runId ?? '-'}/${info.activityId}`;
  const earlier = parseMarker(await store.read(), execution);
  const crashed = earlier !== undefined && earlier.attempt < info.attempt;
  if (crashed && earlier.strict) throw new CrashedBefore(earlier.attempt);
  await store.write(`${execution}#${info.attempt}${crashed ? STRICT : ''}`);
  try {
    return await work(crashed);
  } finally {
    await clear(store);
  }
}

/**
 * Pauses between tries to clear a marker the store did not take (the database unreachable or frozen for a
 * while), about a minute in all: a marker left behind would count this attempt's visible failure as a crash.
 */
const CLEAR_RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 8000, 15_000, 30_000];

async function clear(store: CrashMarkerStore) {
  for (let i = 0; ; i++) {
    try {
      await store.write(null);
      return;
    } catch (err) {
      const delay = CLEAR_RETRY_DELAYS_MS[i];
      if (delay === undefined) throw err;
      await Context.current().sleep(delay); // ends early when the attempt is cancelled
    }
  }
}

const STRICT = '#strict';

/** The attempt a marker records for this activity execution; undefined for none or another execution's. */
function parseMarker(marker: string | null, execution: string) {
  const found = marker?.match(/^(.*)#(\d+)(#strict)?$/);
  if (!found || found[1] !== execution) return undefined;
  return { attempt: Number(found[2]), strict: found[3] === STRICT };
}
