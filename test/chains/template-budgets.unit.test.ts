import { expect } from 'chai';
import { BudgetExceededError, renderTemplate, templateProblem } from '@lib/chains/expressions';
import { setExpressionLimits } from '@lib/expressions/limits';

/** The limit a rendering went over (BudgetExceededError.limit), or a failure when it rendered. */
function limitHit(template: string, context: Record<string, unknown>): string {
  try {
    renderTemplate(template, context);
  } catch (err) {
    expect(err).to.be.instanceOf(BudgetExceededError);
    return (err as BudgetExceededError).limit;
  }
  return expect.fail('rendered within every budget');
}

const zeros = (n: number) => new Array<number>(n).fill(0);

describe('templates on a budget', () => {
  afterEach(() => setExpressionLimits());

  it('renders what it rendered before: values, blocks, sections, whitespace control, json', () => {
    const context = { name: 'Ann', items: ['a', 'b'], o: { k: 'v' }, n: 3 };
    expect(
      renderTemplate('Hi {{name}}, {{{name}}} {{@root.name}} {{items.length}} {{json o}}', context),
    ).to.equal('Hi Ann, Ann Ann 2 {"k":"v"}');
    expect(
      renderTemplate('{{#each items}}{{@index}}:{{this}}{{#if @last}}.{{else}},{{/if}}{{/each}}', context),
    ).to.equal('0:a,1:b.');
    expect(
      renderTemplate('{{#with o}}{{k}}{{/with}}{{#unless z}}-{{/unless}}{{lookup o "k"}}', context),
    ).to.equal('v-v');
    expect(renderTemplate('{{#items}}[{{this}}]{{/items}}{{#o}}{{k}}{{/o}}', context)).to.equal('[a][b]v');
    expect(renderTemplate('  {{#each items}}\n  - {{this}}\n  {{/each}}\n', context)).to.equal(
      '  - a\n  - b\n',
    );
    expect(renderTemplate('{{~name~}}  ', context)).to.equal('Ann');
    expect(renderTemplate('{{constructor}}{{name.constructor}}{{missing.path}}', context)).to.equal('');
  });

  it('refuses at save time the iteration over outside data inside an iteration (issue 32)', () => {
    const attack = '{{#each body.a}}{{#each @root.body.a}}{{#each @root.body.a}}.{{/each}}{{/each}}{{/each}}';
    expect(templateProblem(attack)).to.match(
      /inside an iteration runs over data outside the current element/,
    );
    for (const template of [
      '{{#each a}}{{#each ../a}}.{{/each}}{{/each}}',
      '{{#with body as |b|}}{{#each b.a}}{{#each b.a}}.{{/each}}{{/each}}{{/with}}',
      '{{#each a}}{{#each (lookup @root "a")}}.{{/each}}{{/each}}',
      '{{#each a}}{{#with @root}}{{#each a}}.{{/each}}{{/with}}{{/each}}',
      '{{#a}}{{#@root.a}}.{{/@root.a}}{{/a}}',
    ])
      expect(templateProblem(template), template).to.match(/outside the current element/);
    // Iterating the element itself, or reading (not iterating) outside data, is fine.
    expect(
      templateProblem('{{#each rows as |r|}}{{#each r.cells}}{{this}}{{../title}}{{/each}}{{/each}}'),
    ).to.equal(null);
    expect(templateProblem('{{#each a}}{{#if @root.flag}}{{@root.x}}{{/if}}{{/each}}')).to.equal(null);
  });

  it('refuses partials, decorators, deep nesting and long templates at save time, and when rendering', () => {
    expect(templateProblem('{{> other}}')).to.match(/partials/);
    const recursive = '{{#*inline "p"}}{{> p}}{{/inline}}{{> p}}';
    expect(templateProblem(recursive)).to.match(/inline partials/);
    expect(() => renderTemplate(recursive, {})).to.throw(/inline partials/);
    expect(templateProblem('{{#if a}}'.repeat(9) + '{{/if}}'.repeat(9))).to.match(/TEMPLATE_MAX_BLOCK_DEPTH/);
    expect(templateProblem('{{#if a}}'.repeat(8) + '{{/if}}'.repeat(8))).to.equal(null);
    expect(templateProblem('x'.repeat(50_001))).to.match(/TEMPLATE_MAX_CHARS/);
    expect(templateProblem('{{unknown thing}}')).to.match(/unknown helper unknown/);
  });

  it('stops nested iteration over the data at the iteration limit, before memory grows', () => {
    // Passes the save-time check (each level iterates its own element) but multiplies: 1,000 × 1,000 bodies.
    const rows = new Array(1000).fill(zeros(1000));
    expect(limitHit('{{#each rows}}{{#each this}}.{{/each}}{{/each}}', { rows })).to.equal(
      'TEMPLATE_MAX_ITERATIONS',
    );
    expect(limitHit('{{#rows}}{{#this}}.{{/this}}{{/rows}}', { rows })).to.equal('TEMPLATE_MAX_ITERATIONS');
  });

  it('stops at the output limit, whether the text comes from values or from the block bodies', () => {
    const body = { a: zeros(1000), s: 'x'.repeat(2000) };
    expect(limitHit('{{#each body.a}}{{../body.s}}{{/each}}', { body })).to.equal(
      'TEMPLATE_MAX_OUTPUT_CHARS',
    );
    expect(limitHit(`{{#each body.a}}${'y'.repeat(2000)}{{/each}}`, { body })).to.equal(
      'TEMPLATE_MAX_OUTPUT_CHARS',
    );
    expect(limitHit('{{#each body.a}}{{json @root}}{{/each}}', { body })).to.equal(
      'TEMPLATE_MAX_OUTPUT_CHARS',
    );
    // No block at all: 600 values of 2,000 characters each, counted as they are written.
    expect(limitHit('{{body.s}}'.repeat(600), { body })).to.equal('TEMPLATE_MAX_OUTPUT_CHARS');
    // Nested bodies count once: 500 × 1,000 characters is within a 600,000 limit.
    setExpressionLimits({ templateMaxOutputChars: 600_000 });
    const nested = renderTemplate('{{#each outer}}{{#each inner}}{{@root.s}}{{/each}}{{/each}}', {
      outer: [{ inner: zeros(50) }, { inner: zeros(450) }],
      s: 'z'.repeat(1000),
    });
    expect(nested.length).to.equal(500_000);
  });

  it('stops at the deadline', () => {
    setExpressionLimits({ templateTimeoutMs: 1, templateMaxIterations: 1e9, templateMaxOutputChars: 1e9 });
    const rows = new Array(3000).fill(zeros(3000));
    expect(limitHit('{{#each rows}}{{#each this}}{{/each}}{{/each}}', { rows })).to.equal(
      'TEMPLATE_TIMEOUT_MS',
    );
  });

  it('names the limit in the message', () => {
    setExpressionLimits({ templateMaxIterations: 10 });
    expect(() => renderTemplate('{{#each a}}.{{/each}}', { a: zeros(11) })).to.throw(
      'the template runs its blocks more than 10 times (limit TEMPLATE_MAX_ITERATIONS)',
    );
    expect(renderTemplate('{{#each a}}.{{/each}}', { a: zeros(10) })).to.equal('..........');
  });
});
