import Handlebars, { type HelperDelegate, type HelperOptions } from 'handlebars';
import { BudgetExceededError, expressionLimits } from './limits';
import { templateAstProblem } from './template-check';

/*
 * Handlebars templates over tenant data, rendered on a budget. The budget is enforced while rendering, never only
 * at its end, so a template that would produce gigabytes stops at its first step over a limit:
 *   - every block body run (each `#each` element, each `#with`/`#if` body) counts one iteration
 *     (TEMPLATE_MAX_ITERATIONS) and checks the deadline (TEMPLATE_TIMEOUT_MS);
 *   - every value written (`{{path}}`, `{{json x}}`) and the literal text of every block body counts towards the
 *     output (TEMPLATE_MAX_OUTPUT_CHARS).
 * Values are written through the `__emit` helper: each `{{…}}` of a template is rewritten to `{{__emit …}}`
 * before compiling (Handlebars appends plain values with no hook of its own).
 */

const env = Handlebars.create();
type Ast = hbs.AST.Program;

/** The render in progress (rendering is synchronous, so there is at most one at a time). */
let active: RenderBudget | null = null;

class RenderBudget {
  private iterations = 0;
  private output = 0;
  /** Output of the block bodies running, innermost last: what a body returns that its nested bodies and
   * values already counted is not counted again. */
  private readonly counted: number[] = [];
  private readonly deadline: number;
  private readonly limits = expressionLimits();

  constructor() {
    this.deadline = Date.now() + this.limits.templateTimeoutMs;
  }

  private checkClock() {
    if (Date.now() > this.deadline)
      throw new BudgetExceededError(
        'TEMPLATE_TIMEOUT_MS',
        `the template took longer than ${this.limits.templateTimeoutMs} ms to render`,
      );
  }

  private produced(chars: number) {
    this.output += chars;
    if (this.output > this.limits.templateMaxOutputChars)
      throw new BudgetExceededError(
        'TEMPLATE_MAX_OUTPUT_CHARS',
        `the template renders more than ${this.limits.templateMaxOutputChars} characters`,
      );
  }

  /** A value written by `{{…}}`. */
  emitted(text: string) {
    this.checkClock();
    this.produced(text.length);
    if (this.counted.length) this.counted[this.counted.length - 1]! += text.length;
  }

  /** Runs one block body, counting it and the text it adds. */
  body<T>(run: () => T): T {
    if (++this.iterations > this.limits.templateMaxIterations)
      throw new BudgetExceededError(
        'TEMPLATE_MAX_ITERATIONS',
        `the template runs its blocks more than ${this.limits.templateMaxIterations} times`,
      );
    this.checkClock();
    this.counted.push(0);
    let result: T;
    let nested = 0;
    try {
      result = run();
    } finally {
      nested = this.counted.pop()!;
    }
    const length = typeof result === 'string' ? result.length : 0;
    this.produced(Math.max(0, length - nested));
    if (this.counted.length) this.counted[this.counted.length - 1]! += length;
    return result;
  }
}

const WRAPPED = Symbol('budgeted');
type Program = HelperOptions['fn'] & { [WRAPPED]?: true };

function budgeted(program: Program | undefined): Program | undefined {
  if (!program || program[WRAPPED]) return program;
  const wrapped = function (this: unknown, ...args: Parameters<Program>) {
    return active ? active.body(() => program.apply(this, args)) : program.apply(this, args);
  } as Program;
  // The runtime reads properties of a program (its block parameters, its depth).
  Object.assign(wrapped, program);
  wrapped[WRAPPED] = true;
  return wrapped;
}

// Every built-in block helper runs its bodies through the budget; `blockHelperMissing` is what a section
// (`{{#items}}…{{/items}}`) calls, and it iterates through `each`.
for (const name of ['each', 'with', 'if', 'unless', 'blockHelperMissing']) {
  const helper = env.helpers[name] as HelperDelegate;
  env.registerHelper(name, function (this: unknown, ...args: unknown[]) {
    const options = args[args.length - 1] as HelperOptions;
    args[args.length - 1] = { ...options, fn: budgeted(options.fn), inverse: budgeted(options.inverse) };
    return (helper as (...a: unknown[]) => unknown).apply(this, args);
  });
}
// `log` would write to the worker's console; `json` prints a value as JSON (objects render as text otherwise).
env.registerHelper('log', () => '');
env.registerHelper('json', (value: unknown) => JSON.stringify(value ?? null));
env.registerHelper('__emit', (value: unknown) => {
  // What Handlebars itself would append: nothing for null and undefined, the value as text otherwise.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the same text Handlebars writes itself
  const text = value === null || value === undefined ? '' : String(value);
  active?.emitted(text);
  return text;
});

const KNOWN_HELPERS = { json: true, __emit: true };
const BUILT_IN = new Set(['json', 'lookup', 'log', '__emit']);

/** Rewrites every `{{x …}}` of the tree to `{{__emit (x …)}}` (or `{{__emit x}}` for a plain path). */
function routeValuesThroughEmit(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach(routeValuesThroughEmit);
  const n = node as Record<string, unknown> & { type?: string };
  if (n.type === 'MustacheStatement') {
    const m = n as unknown as hbs.AST.MustacheStatement;
    const plainPath =
      m.path.type === 'PathExpression' &&
      !m.params.length &&
      !m.hash &&
      !BUILT_IN.has((m.path as hbs.AST.PathExpression).original);
    const value = plainPath
      ? m.path
      : ({
          type: 'SubExpression',
          path: m.path,
          params: m.params,
          hash: m.hash,
          loc: m.loc,
        } as Ast['body'][0]);
    Object.assign(m, {
      path: {
        type: 'PathExpression',
        data: false,
        depth: 0,
        parts: ['__emit'],
        original: '__emit',
        loc: m.loc,
      },
      params: [value],
      hash: undefined,
    });
    return;
  }
  for (const [key, value] of Object.entries(n)) if (key !== 'loc') routeValuesThroughEmit(value);
}

const oneLine = (message: string) => message.replace(/\s*\n[\s-]*\^?\s*/g, ' ').trim();

/** The template's tree, or why it may not be used (too long, unparseable, or refused by templateAstProblem). */
function parse(template: string): { ast: Ast } | { problem: string } {
  const max = expressionLimits().templateMaxChars;
  if (template.length > max) return { problem: `is longer than ${max} characters (TEMPLATE_MAX_CHARS)` };
  let ast: Ast;
  try {
    ast = env.parseWithoutProcessing(template);
  } catch (err) {
    return { problem: oneLine((err as Error).message) };
  }
  const problem = templateAstProblem(ast);
  return problem ? { problem } : { ast };
}

/** The problem with a template, or null when it may be saved. */
export function templateProblem(template: string): string | null {
  const parsed = parse(template);
  if ('problem' in parsed) return parsed.problem;
  try {
    env.precompile(parsed.ast, { knownHelpers: KNOWN_HELPERS, knownHelpersOnly: true, strict: false });
    return null;
  } catch (err) {
    return oneLine((err as Error).message);
  }
}

// Compiled once per distinct template: a step renders on every run and every fan-out element.
const templates = new Map<string, HandlebarsTemplateDelegate>();

function compiled(template: string): HandlebarsTemplateDelegate {
  let render = templates.get(template);
  if (!render) {
    const parsed = parse(template);
    // A template saved before a check existed is refused here as it would be at save time.
    if ('problem' in parsed) throw new Error(parsed.problem);
    routeValuesThroughEmit(parsed.ast);
    if (templates.size >= 200) templates.clear();
    render = env.compile(parsed.ast, {
      noEscape: true,
      knownHelpers: KNOWN_HELPERS,
      knownHelpersOnly: true,
    });
    templates.set(template, render);
  }
  return render;
}

/**
 * Renders a template over tenant data within its budget; throws BudgetExceededError naming the limit it went
 * over, or an Error saying why the template cannot be rendered.
 */
export function renderTemplate(template: string, context: Record<string, unknown>): string {
  const render = compiled(template);
  const outer = active;
  active = new RenderBudget();
  try {
    return render(context, { allowProtoMethodsByDefault: false, allowProtoPropertiesByDefault: false });
  } finally {
    active = outer;
  }
}
