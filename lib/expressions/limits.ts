/**
 * The budgets of the small languages tenants write (Handlebars templates, Jexl guards, JSONPath paths) and of
 * their glob patterns. One setting per process: createDeps applies the configuration (lib/config/, where each
 * variable is documented); code that runs without it (unit tests, the CLI) uses the defaults below.
 */
export interface ExpressionLimits {
  /** TEMPLATE_MAX_CHARS: the longest template saved (instructions, a webhook mapping value). */
  templateMaxChars: number;
  /** TEMPLATE_MAX_BLOCK_DEPTH: how deep block helpers (`{{#each}}`, `{{#with}}`, `{{#if}}`…) may nest. */
  templateMaxBlockDepth: number;
  /** TEMPLATE_MAX_OUTPUT_CHARS: the most text one rendering may produce. */
  templateMaxOutputChars: number;
  /** TEMPLATE_MAX_ITERATIONS: block bodies one rendering may run (every `#each` element counts). */
  templateMaxIterations: number;
  /** TEMPLATE_TIMEOUT_MS: the longest one rendering may take. */
  templateTimeoutMs: number;
  /** EXPRESSION_MAX_CHARS: the longest Jexl guard or JSONPath saved. */
  expressionMaxChars: number;
  /** EXPRESSION_MAX_STEPS: evaluation steps (Jexl nodes, JSONPath nodes visited) of one evaluation. */
  expressionMaxSteps: number;
  /** EXPRESSION_TIMEOUT_MS: the longest one guard or path evaluation may take. */
  expressionTimeoutMs: number;
  /** PATTERN_MAX_CHARS: the longest glob pattern (filePattern). */
  patternMaxChars: number;
  /** PATTERN_MAX_WILDCARDS: `*`, `?` and `[…]` one glob pattern may hold. */
  patternMaxWildcards: number;
}

export const DEFAULT_EXPRESSION_LIMITS: Readonly<ExpressionLimits> = Object.freeze({
  templateMaxChars: 50_000,
  templateMaxBlockDepth: 8,
  templateMaxOutputChars: 1_000_000,
  templateMaxIterations: 100_000,
  templateTimeoutMs: 1_000,
  expressionMaxChars: 1_000,
  expressionMaxSteps: 200_000,
  expressionTimeoutMs: 1_000,
  patternMaxChars: 100,
  patternMaxWildcards: 20,
});

let current: ExpressionLimits = { ...DEFAULT_EXPRESSION_LIMITS };

/** Applies the process's configuration (createDeps), or the defaults again (tests). */
export function setExpressionLimits(limits: Partial<ExpressionLimits> = {}): void {
  current = { ...DEFAULT_EXPRESSION_LIMITS, ...limits };
}

export const expressionLimits = (): Readonly<ExpressionLimits> => current;

/**
 * A rendering or an evaluation went over one of its budgets. `limit` names the configuration variable, so the
 * run, delivery or step that ends with it says which one (and an operator knows what to raise).
 */
export class BudgetExceededError extends Error {
  constructor(
    readonly limit: string,
    message: string,
  ) {
    super(`${message} (limit ${limit})`);
    this.name = 'BudgetExceededError';
  }
}

/** A clock and a counter of work, checked as the work goes (never only at its end). */
export class WorkBudget {
  private steps = 0;
  private readonly deadline: number;
  /** What ended the work, kept for callers whose library rewraps what a callback throws. */
  exceeded: BudgetExceededError | null = null;

  constructor(
    private readonly what: string,
    private readonly maxSteps: { limit: string; value: number; unit: string },
    private readonly timeout: { limit: string; ms: number },
  ) {
    this.deadline = Date.now() + timeout.ms;
  }

  tick(): void {
    if (this.exceeded) throw this.exceeded;
    if (++this.steps > this.maxSteps.value)
      this.exceeded = new BudgetExceededError(
        this.maxSteps.limit,
        `${this.what} took more than ${this.maxSteps.value} ${this.maxSteps.unit}`,
      );
    // Date.now() is cheap next to any step counted here; checking every step keeps the overshoot to one step.
    else if (Date.now() > this.deadline)
      this.exceeded = new BudgetExceededError(
        this.timeout.limit,
        `${this.what} took longer than ${this.timeout.ms} ms`,
      );
    if (this.exceeded) throw this.exceeded;
  }
}
