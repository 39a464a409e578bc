import { StepFailed } from './errors';

/** Fails the step (for good) when `json` is over `max` bytes (CHAIN_STATE_MAX_BYTES): the run's document could
 * not hold it. */
export function checkStateSize(json: string, what: string, max: number) {
  // A UTF-8 byte is at least one UTF-16 unit: only long strings need counting.
  if (json.length * 3 <= max) return;
  const bytes = Buffer.byteLength(json);
  if (bytes > max)
    throw new StepFailed(`${what} would hold ${bytes} bytes; at most ${max} (CHAIN_STATE_MAX_BYTES)`);
}
