import { Jexl } from 'jexl';
import type Ast from 'jexl/Ast';
import { expressionLimits, WorkBudget } from './limits';

/*
 * Jexl guards (runIf, failBeforeRunningIf, failAfterRunningIf) over a chain's state, on a budget: every node
 * evaluated counts a step (EXPRESSION_MAX_STEPS) and checks the deadline (EXPRESSION_TIMEOUT_MS). Jexl has no
 * hook for that, so evaluation goes through a subclass of its Evaluator (jexl 2.3.0, pinned), synchronously
 * (Jexl's own PromiseSync): an asynchronous evaluation runs on microtasks, which would hold the worker's event
 * loop just the same, without a way to stop it.
 */

interface EvaluatorInstance {
  eval(ast: Ast): { value?: unknown; error?: unknown; then(f: (v: unknown) => unknown): unknown };
  _grammar: unknown;
  _context: unknown;
  Promise: unknown;
}
type EvaluatorClass = new (
  grammar: unknown,
  context: unknown,
  relativeContext: unknown,
  promise: unknown,
) => EvaluatorInstance;

/* eslint-disable @typescript-eslint/no-require-imports -- Jexl's evaluator is not part of its typed entry */
const Evaluator = require('jexl/dist/evaluator/Evaluator') as EvaluatorClass;
const PromiseSync = require('jexl/dist/PromiseSync') as {
  all(values: unknown[]): { then(f: (values: unknown[]) => unknown): unknown };
};
/* eslint-enable @typescript-eslint/no-require-imports */

class BudgetedEvaluator extends Evaluator {
  constructor(
    grammar: unknown,
    context: unknown,
    relativeContext: unknown,
    readonly budget: WorkBudget,
  ) {
    super(grammar, context, relativeContext, PromiseSync);
  }

  override eval(ast: Ast) {
    this.budget.tick();
    return super.eval(ast);
  }

  /** Jexl's own `_filterRelative`, with each element's evaluator on the same budget. */
  _filterRelative(subject: unknown, expr: Ast) {
    const elements: unknown[] = Array.isArray(subject) ? subject : subject === undefined ? [] : [subject];
    const results = elements.map((element) =>
      new BudgetedEvaluator(this._grammar, this._context, element, this.budget).eval(expr),
    );
    return PromiseSync.all(results).then((values) => elements.filter((_, i) => values[i]));
  }
}

const jexl = new Jexl();
const grammar = (jexl as unknown as { _grammar: unknown })._grammar;

const oneLine = (message: string) => message.replace(/\s*\n[\s-]*\^?\s*/g, ' ').trim();

/** Brackets nested deeper than this make Jexl's parser slow (quadratic in the depth); no guard needs them. */
const MAX_NESTING = 16;

function nesting(expression: string): number {
  let depth = 0;
  let max = 0;
  for (const c of expression) {
    if (c === '(' || c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ')' || c === ']' || c === '}') depth--;
  }
  return max;
}

/** The root of an identifier chain or filter subject (`a.b[.c].d` → `a`). */
function rootOf(ast: Ast): Ast {
  let node = ast;
  for (;;) {
    if (node.type === 'Identifier' && node.from) node = node.from;
    else if (node.type === 'FilterExpression') node = node.subject;
    else return node;
  }
}

/** Whether a filter over each element (`items[.x > 1]`) holds another one over data outside the element
 * (`items[.x in other[.y]]`): that multiplies the work by the size of that data at every level. */
function nestedOuterFilter(ast: Ast, insideFilter: boolean): boolean {
  const children = (node: Ast): Ast[] => {
    switch (node.type) {
      case 'UnaryExpression':
        return [node.right];
      case 'BinaryExpression':
        return [node.left, node.right];
      case 'ConditionalExpression':
        return [node.test, node.consequent, node.alternate];
      case 'FilterExpression':
        return [node.subject];
      case 'ArrayLiteral':
        return node.value;
      case 'ObjectLiteral':
        return Object.values(node.value);
      case 'Identifier':
        return node.from ? [node.from] : [];
      case 'FunctionCall':
        return node.args;
      default:
        return [];
    }
  };
  if (ast.type === 'FilterExpression' && ast.relative) {
    const root = rootOf(ast);
    if (insideFilter && !(root.type === 'Identifier' && root.relative)) return true;
    if (nestedOuterFilter(ast.expr, true)) return true;
  }
  return children(ast).some((child) => nestedOuterFilter(child, insideFilter));
}

/** The problem with a guard expression, or null when it may be saved. */
export function expressionProblem(expression: string): string | null {
  const max = expressionLimits().expressionMaxChars;
  if (expression.length > max) return `is longer than ${max} characters (EXPRESSION_MAX_CHARS)`;
  if (nesting(expression) > MAX_NESTING) return `nests brackets more than ${MAX_NESTING} deep`;
  let ast: Ast | null;
  try {
    // An expression with nothing to evaluate (`(`) parses to no tree at all.
    ast = (jexl.compile(expression) as unknown as { _ast: Ast | null })._ast;
  } catch (err) {
    return oneLine((err as Error).message);
  }
  if (!ast) return 'is empty or incomplete';
  if (nestedOuterFilter(ast, false))
    return 'filters over data outside the element inside a filter over elements (its work would multiply)';
  return null;
}

/** The guard's value over the state, within its budget (BudgetExceededError beyond it). */
export function evaluateGuard(expression: string, state: Record<string, unknown>): unknown {
  const limits = expressionLimits();
  const budget = new WorkBudget(
    `the expression ${expression}`,
    { limit: 'EXPRESSION_MAX_STEPS', value: limits.expressionMaxSteps, unit: 'evaluation steps' },
    { limit: 'EXPRESSION_TIMEOUT_MS', ms: limits.expressionTimeoutMs },
  );
  const ast = (jexl.compile(expression) as unknown as { _ast: Ast | null })._ast;
  if (!ast) return undefined;
  const result = new BudgetedEvaluator(grammar, state, undefined, budget).eval(ast);
  if (result.error instanceof Error) throw result.error;
  if (result.error) throw new Error('the expression could not be evaluated');
  return result.value;
}
