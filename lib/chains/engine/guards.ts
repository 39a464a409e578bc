import { guardHolds } from '@lib/chains/expressions';
import { StepFailed } from './errors';
import type { State } from './execution-snapshot';

/** Whether a guard holds; one that cannot be evaluated over this state (over its budget, or an error) fails
 * the step: the same state would fail it again, so it is not retried. */
export async function holds(field: string, expression: string, state: State): Promise<boolean> {
  try {
    return await guardHolds(expression, state);
  } catch (err) {
    throw new StepFailed(`${field} could not be evaluated: ${(err as Error).message}`);
  }
}
