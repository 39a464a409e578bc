import { JSONPath } from 'jsonpath-plus';
import { expressionLimits, WorkBudget } from './limits';

/*
 * JSONPath (forEachElement) over a chain's state, on a budget. jsonpath-plus 10.3.0 evaluates filters
 * (`[?(@.ok)]`) and script expressions (`[(@.length-1)]`) with its "safe" interpreter by default, which still
 * calls any method a value has (`@.name.match("(a+)+$")`, `@.text.repeat(1e9)`): scripts here may only read and
 * compare (no calls, no assignments), and every node visited counts a step (EXPRESSION_MAX_STEPS) and checks the
 * deadline (EXPRESSION_TIMEOUT_MS).
 */

interface JsepNode {
  type: string;
  [key: string]: unknown;
}
type ScriptClass = new (code: string) => { ast: JsepNode; runInNewContext(context: object): unknown };
const SafeScript = (JSONPath as unknown as { prototype: { safeVm: { Script: ScriptClass } } }).prototype
  .safeVm.Script;

/** What a filter or script may use: reading values and comparing them. */
const ALLOWED = new Set([
  'BinaryExpression',
  'LogicalExpression',
  'ConditionalExpression',
  'UnaryExpression',
  'MemberExpression',
  'Identifier',
  'Literal',
]);

function forbiddenNode(node: unknown): string | null {
  if (node === null || typeof node !== 'object') return null;
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = forbiddenNode(item);
      if (found) return found;
    }
    return null;
  }
  const n = node as JsepNode;
  if (typeof n.type === 'string' && !ALLOWED.has(n.type)) return n.type;
  for (const value of Object.values(n)) {
    const found = forbiddenNode(value);
    if (found) return found;
  }
  return null;
}

/** The evaluation in progress (evaluation is synchronous, so there is at most one at a time). */
let active: WorkBudget | null = null;

class ReadOnlyScript extends SafeScript {
  constructor(code: string) {
    super(code);
    const found = forbiddenNode(this.ast);
    if (found)
      throw new Error(
        `filters and scripts may only read and compare values (${found === 'CallExpression' ? 'no method calls' : `no ${found}`})`,
      );
  }

  override runInNewContext(context: object) {
    active?.tick();
    return super.runInNewContext(context);
  }
}

/** jsonpath-plus keeps every path and script it ever saw in one process-wide cache: keep it bounded. */
function boundCache() {
  const holder = JSONPath as unknown as { cache: Record<string, unknown> };
  if (Object.keys(holder.cache).length > 1000) holder.cache = {};
}

/** The scripts of a path (`?(…)` filters and `(…)` expressions), as jsonpath-plus will evaluate them. */
function scriptsOf(path: string): string[] {
  return JSONPath.toPathArray(path)
    .filter((token) => token.startsWith('?(') || token.startsWith('('))
    .map((token) => (token.startsWith('?(') ? token.replace(/^\?\((.*?)\)$/u, '$1') : token))
    .map((code) =>
      code
        .replaceAll('@parentProperty', '_$_parentProperty')
        .replaceAll('@parent', '_$_parent')
        .replaceAll('@property', '_$_property')
        .replaceAll('@root', '_$_root')
        .replaceAll('@path', '_$_path')
        .replaceAll(/@([.\s)[])/gu, '_$_v$1'),
    );
}

/** The problem with a path, or null when it may be saved. */
export function pathProblem(path: string): string | null {
  const max = expressionLimits().expressionMaxChars;
  if (path.length > max) return `is longer than ${max} characters (EXPRESSION_MAX_CHARS)`;
  if (!path.startsWith('$')) return 'must be a JSONPath starting with $ (for example $.input.items)';
  boundCache();
  try {
    for (const script of scriptsOf(path)) new ReadOnlyScript(script);
    JSONPath({ path, json: {}, wrap: true, eval: ReadOnlyScript });
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * A slice ending at 0 (`[0:0]`, `[2:0]`, `[:0]`) selects nothing, as in RFC 9535 and JavaScript's slice().
 * jsonpath-plus reads an end of 0 as "to the end": a fan-out meant to cover nothing would run over, and bill,
 * every element.
 */
const endsAtZero = (slice: string) => /^-?0+$/u.test(slice.split(':')[1] ?? '');

/** Every value the path selects in the state, within the budget (BudgetExceededError beyond it). */
export function selectPath(path: string, state: Record<string, unknown>): unknown[] {
  const limits = expressionLimits();
  const budget = new WorkBudget(
    `the path ${path}`,
    { limit: 'EXPRESSION_MAX_STEPS', value: limits.expressionMaxSteps, unit: 'evaluation steps' },
    { limit: 'EXPRESSION_TIMEOUT_MS', ms: limits.expressionTimeoutMs },
  );
  boundCache();
  const evaluation = JSONPath({ path, json: state, wrap: true, eval: ReadOnlyScript, autostart: false });
  // Every node the evaluation visits goes through _trace, and every slice through _slice (jsonpath-plus 10.3.0,
  // pinned).
  const traced = evaluation as unknown as {
    _trace: (...args: unknown[]) => unknown;
    _slice: (loc: string, ...args: unknown[]) => unknown;
  };
  const trace = traced._trace;
  traced._trace = function (this: unknown, ...args: unknown[]) {
    budget.tick();
    return trace.apply(this, args);
  };
  const slice = traced._slice;
  traced._slice = function (this: unknown, loc: string, ...args: unknown[]) {
    return endsAtZero(loc) ? [] : slice.call(this, loc, ...args);
  };
  const outer = active;
  active = budget;
  try {
    return evaluation.evaluate(path, state, undefined, undefined) as unknown[];
  } catch (err) {
    // jsonpath-plus rewraps what a script throws: the budget's own error is the cause.
    throw budget.exceeded ?? err;
  } finally {
    active = outer;
  }
}
