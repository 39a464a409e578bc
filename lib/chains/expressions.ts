import Handlebars from 'handlebars';
import { Jexl } from 'jexl';
import { JSONPath } from 'jsonpath-plus';

/*
 * The three small languages a step is written in, each with one well-kept library:
 *   - instructions: Handlebars over the chain state (no prototype access; only built-in helpers and `json`);
 *   - guards (runIf, failBeforeRunningIf, failAfterRunningIf): Jexl expressions over the chain state;
 *   - forEachElement: a JSONPath into the chain state that selects the array a step fans out over.
 * Each has a check used when a step is saved (a syntax error is a 400 then, not a failed run later).
 */

const hbs = Handlebars.create();
// `log` would write to the worker's console; `json` prints a value as JSON (objects render as text otherwise).
hbs.registerHelper('log', () => '');
hbs.registerHelper('json', (value: unknown) => JSON.stringify(value ?? null));
const KNOWN_HELPERS = { json: true };

const jexl = new Jexl();

const oneLine = (message: string) => message.replace(/\s*\n[\s-]*\^?\s*/g, ' ').trim();

/** The problem with a template, or null when it compiles. */
export function templateProblem(template: string): string | null {
  try {
    hbs.precompile(template, { knownHelpers: KNOWN_HELPERS, knownHelpersOnly: true, strict: false });
    return null;
  } catch (err) {
    return oneLine((err as Error).message);
  }
}

// Compiled once per distinct template: a step renders on every run and every fan-out element.
const templates = new Map<string, HandlebarsTemplateDelegate>();

export function renderTemplate(template: string, context: Record<string, unknown>): string {
  let render = templates.get(template);
  if (!render) {
    if (templates.size >= 200) templates.clear();
    render = hbs.compile(template, { noEscape: true, knownHelpers: KNOWN_HELPERS, knownHelpersOnly: true });
    templates.set(template, render);
  }
  return render(context, { allowProtoMethodsByDefault: false, allowProtoPropertiesByDefault: false });
}

/** The problem with a guard expression, or null when it parses. */
export function expressionProblem(expression: string): string | null {
  try {
    // An expression with nothing to evaluate (`(`) parses to no tree at all.
    if (!(jexl.compile(expression) as unknown as { _ast: unknown })._ast) return 'is empty or incomplete';
    return null;
  } catch (err) {
    return oneLine((err as Error).message);
  }
}

/** Whether a guard holds over the state (a truthy result). */
export async function guardHolds(expression: string, state: Record<string, unknown>): Promise<boolean> {
  return Boolean(await jexl.eval(expression, state));
}

/** The problem with a forEachElement path, or null when it is a JSONPath. */
export function pathProblem(path: string): string | null {
  if (!path.startsWith('$')) return 'must be a JSONPath starting with $ (for example $.input.items)';
  try {
    JSONPath({ path, json: {}, wrap: true });
    return null;
  } catch (err) {
    return (err as Error).message;
  }
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
    matches = JSONPath<unknown[]>({ path, json: state, wrap: true });
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
