import { AppError } from '@lib/errors';
import { selectElements } from './expressions';

/*
 * The fan-out ceiling (CHAIN_FANOUT_MAX): one step runs at most that many elements, one model call each. A run
 * whose input already holds a longer array at a step's forEachElement path is refused when it is asked for
 * (400 fanout_too_large); an array that only a step's output (or a trigger's body) makes too long fails that
 * step before any element is stored or run.
 */

export const FANOUT_TOO_LARGE = 'fanout_too_large';

/** Why a fan-out over `count` elements is refused. */
export const fanOutTooLarge = (path: string, count: number, max: number) =>
  `forEachElement ${path} selects ${count} elements; a fan-out step runs over at most ${max} (CHAIN_FANOUT_MAX)`;

type CheckedStep = { stepOrder: number; name: string; forEachElement?: string | null; runIf?: string | null };

/**
 * 400 fanout_too_large when a step the run will run (`planned`) fans out over more than `max` elements selected
 * from the input alone. Only what is certain is refused: a step with a runIf may be skipped. The state's `input`
 * stays the input (no output schema may declare `input`), and a path with wildcards or filters selects at least
 * as much once later steps add to the state, so its count over the input is a lower bound.
 */
export function refuseLongFanOut(
  planned: readonly CheckedStep[],
  payload: Record<string, unknown>,
  max: number,
): void {
  const state = { input: payload };
  for (const step of planned) {
    if (step.forEachElement && !step.runIf) {
      const selection = selectElements(step.forEachElement, state);
      if (selection.ok && selection.elements.length > max)
        throw new AppError(
          400,
          FANOUT_TOO_LARGE,
          `step ${step.stepOrder}${step.name ? ` (${step.name})` : ''}: ${fanOutTooLarge(step.forEachElement, selection.elements.length, max)}`,
          { limit: max, variable: 'CHAIN_FANOUT_MAX', stepOrder: step.stepOrder },
        );
    }
  }
}
