import { expect } from 'chai';
import {
  BudgetExceededError,
  expressionProblem,
  guardHolds,
  pathProblem,
  selectElements,
} from '@lib/chains/expressions';
import { setExpressionLimits } from '@lib/expressions/limits';

const items = (n: number) => Array.from({ length: n }, (_, x) => ({ x, ok: x % 2 === 0 }));

describe('guards (Jexl) and paths (JSONPath) on a budget', () => {
  afterEach(() => setExpressionLimits());

  it('evaluates guards as before', async () => {
    const state = { input: { n: 3, items: items(10), name: 'Ann' } };
    expect(await guardHolds('input.n > 2 && input.name == "Ann"', state)).to.equal(true);
    expect(await guardHolds('input.items[.x == 4][0].ok == true', state)).to.equal(true);
    expect(await guardHolds('input.n < 2 || input.name in ["Bob"]', state)).to.equal(false);
    expect(await guardHolds('missing.path', state)).to.equal(false);
  });

  it('refuses at save time long, deeply nested and multiplying guards', () => {
    expect(expressionProblem('a == 1 || '.repeat(110) + 'a == 2')).to.match(/EXPRESSION_MAX_CHARS/);
    expect(expressionProblem('('.repeat(17) + '1' + ')'.repeat(17))).to.match(
      /nests brackets more than 16 deep/,
    );
    expect(expressionProblem('a[.x in b[.x > 1]]')).to.match(/work would multiply/);
    expect(expressionProblem('a[.rows[.ok]]')).to.equal(null);
    expect(expressionProblem('input.n >')).to.match(/Unexpected end of expression/);
  });

  it('stops a guard at its step limit and at its deadline, naming the limit', async () => {
    // Saved before the check, or over data the check cannot see: 2,000 × 2,000 evaluations.
    const state = { a: items(2000), b: items(2000) };
    const refusal = async (expression: string) => {
      try {
        await guardHolds(expression, state);
      } catch (err) {
        expect(err).to.be.instanceOf(BudgetExceededError);
        return (err as Error).message;
      }
      return expect.fail('evaluated within its budget');
    };
    expect(await refusal('a[.x in b[.x > 1]]')).to.match(
      /more than 200000 evaluation steps \(limit EXPRESSION_MAX_STEPS\)/,
    );
    setExpressionLimits({ expressionTimeoutMs: 1, expressionMaxSteps: 1e9 });
    expect(await refusal('a[.x in b[.x > 1]]')).to.match(/longer than 1 ms \(limit EXPRESSION_TIMEOUT_MS\)/);
  });

  it('selects with paths as before, filters included', () => {
    const state = { input: { items: items(6) } };
    expect(selectElements('$.input.items', state)).to.deep.equal({ ok: true, elements: items(6) });
    const even = selectElements('$.input.items[?(@.ok && @.x > 0)]', state);
    expect(even).to.deep.equal({ ok: true, elements: [items(6)[2], items(6)[4]] });
    expect(pathProblem('$.input.items[?(@.ok)]')).to.equal(null);
  });

  it('refuses paths whose scripts call methods or assign, and long paths', () => {
    // A filter may not call a method: `match` would run a tenant-written regular expression.
    expect(pathProblem('$.input.items[?(@.name.match("(a+)+$"))]')).to.match(/no method calls/);
    expect(pathProblem('$..[?(@.text.repeat(1e9))]')).to.match(/no method calls/);
    expect(pathProblem('$.a[?(@.x = 1)]')).to.match(/only read and compare/);
    expect(pathProblem('$.' + 'a.'.repeat(600) + 'b')).to.match(/EXPRESSION_MAX_CHARS/);
    expect(pathProblem('input.items')).to.match(/must be a JSONPath starting with \$/);
    // And at run time, for a path saved before the check.
    const run = selectElements('$.input.items[?(@.name.match("(a+)+$"))]', {
      input: { items: [{ name: 'aaa' }] },
    });
    expect(run.ok).to.equal(false);
    expect((run as { problem: string }).problem).to.match(/no method calls/);
  });

  it('stops a path at its step limit, naming it', () => {
    // The step limit alone decides here: on a loaded machine the 1 s deadline could come first.
    setExpressionLimits({ expressionTimeoutMs: 60_000 });
    const run = selectElements('$.rows[*]', { rows: new Array(300_000).fill({ ok: true }) });
    expect(run.ok).to.equal(false);
    expect((run as { problem: string }).problem).to.match(
      /more than 200000 evaluation steps \(limit EXPRESSION_MAX_STEPS\)/,
    );
    setExpressionLimits({ expressionMaxSteps: 1e9, expressionTimeoutMs: 1 });
    const slow = selectElements('$..[?(@.ok)]', { rows: new Array(300_000).fill({ ok: true }) });
    expect((slow as { problem: string }).problem).to.match(/\(limit EXPRESSION_TIMEOUT_MS\)/);
  });
});
