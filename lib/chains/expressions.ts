import { JSONPath } from 'jsonpath-plus';
import { evaluateGuard } from '@lib/expressions/guards';
import { selectPath } from '@lib/expressions/paths';

/*
 * The three small languages a step is written in, each with one well-kept library, each on a budget
 * (lib/expressions/limits.ts):
 *   - instructions: Handlebars over the chain state (no prototype access; only built-in helpers and `json`);
 *   - guards (runIf, failBeforeRunningIf, failAfterRunningIf): Jexl expressions over the chain state;
 *   - forEachElement: a JSONPath into the chain state that selects the array a step fans out over.
 * Each has a check used when a step is saved (a syntax error, or a shape that can only be too costly, is a 400
 * then, not a failed run later); going over a budget at run time throws BudgetExceededError naming the limit.
 */

export { renderTemplate, templateProblem } from '@lib/expressions/templates';
export { expressionProblem } from '@lib/expressions/guards';
export { pathProblem } from '@lib/expressions/paths';
export { BudgetExceededError } from '@lib/expressions/limits';

/** Whether a guard holds over the state (a truthy result). */
export async function guardHolds(expression: string, state: Record<string, unknown>): Promise<boolean> {
  // Evaluated synchronously (see lib/expressions/guards.ts); callers await it like any evaluation.
  return Boolean(await Promise.resolve(evaluateGuard(expression, state)));
}

export type Selection = { ok: true; elements: unknown[] } | { ok: false; problem: string };

/** A path with a wildcard, recursive descent, filter, union or slice selects any number of values. */
function selectsMany(path: string): boolean {
  return JSONPath.toPathArray(path).some(
    (token) => token === '*' || token === '..' || /^\?\(|[,:]/.test(token),
  );
}

/**
 * The elements a fan-out step runs over. A path that selects many values (`$.rows[*]`, `$.rows[?(@.ok)]`)
 * fans out over what it selects, possibly nothing; any other path must select exactly one array (an empty one
 * runs the step over nothing). Anything else is a problem the run fails with.
 */
export function selectElements(path: string, state: Record<string, unknown>): Selection {
  let matches: unknown[];
  try {
    matches = selectPath(path, state);
  } catch (err) {
    return { ok: false, problem: `forEachElement ${path} could not be evaluated: ${(err as Error).message}` };
  }
  if (selectsMany(path)) return { ok: true, elements: matches };
  if (matches.length === 0) return { ok: false, problem: `forEachElement ${path} selects nothing` };
  const [value] = matches;
  if (!Array.isArray(value))
    return {
      ok: false,
      problem: `forEachElement ${path} selects ${value === null ? 'null' : typeof value}, not an array`,
    };
  return { ok: true, elements: value };
}
