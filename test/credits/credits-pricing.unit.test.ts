import { expect } from 'chai';
import { loadConfig } from '@lib/config';
import { creditCost, tokenCount } from '@lib/credits/pricing';

const pricing = { perThousandPromptTokens: 10, perThousandCompletionTokens: 40 };

describe('credit pricing', () => {
  it('charges prompt and completion tokens at their own price per 1,000, rounded up to whole credits', () => {
    expect(creditCost({ promptTokens: 1000, completionTokens: 0 }, pricing)).to.equal(10);
    expect(creditCost({ promptTokens: 0, completionTokens: 1000 }, pricing)).to.equal(40);
    expect(creditCost({ promptTokens: 1500, completionTokens: 250 }, pricing)).to.equal(25);
    // 1 token is 0.01 credits: a call is never free, and rounding costs less than one credit.
    expect(creditCost({ promptTokens: 1, completionTokens: 0 }, pricing)).to.equal(1);
    expect(creditCost({ promptTokens: 101, completionTokens: 0 }, pricing)).to.equal(2);
    expect(creditCost({ promptTokens: 0, completionTokens: 0 }, pricing)).to.equal(0);
    expect(
      creditCost(
        { promptTokens: 5000, completionTokens: 5000 },
        { perThousandPromptTokens: 0, perThousandCompletionTokens: 0 },
      ),
    ).to.equal(0);
  });

  it('bills only whole, non-negative token counts a model server reports', () => {
    expect(tokenCount(12)).to.equal(12);
    expect(tokenCount(12.9)).to.equal(12);
    for (const odd of [-5, NaN, Infinity, '12', null, undefined])
      expect(tokenCount(odd), String(odd)).to.equal(0);
  });

  it('reads prices and the starting balance from the environment, with defaults, refusing nonsense', () => {
    const base = { JWT_SECRET: 'x'.repeat(32) };
    const defaults = loadConfig(base);
    expect(defaults.credits).to.deep.equal({
      startingBalance: 10_000,
      perThousandPromptTokens: 10,
      perThousandCompletionTokens: 40,
    });
    expect(defaults.chainGeneration).to.deep.equal({ model: 'gpt-4o-mini', timeoutMs: 60_000 });
    const set = loadConfig({
      ...base,
      CREDITS_STARTING_BALANCE: '0',
      CREDITS_PER_1K_PROMPT_TOKENS: '3',
      CREDITS_PER_1K_COMPLETION_TOKENS: '9',
      CHAIN_GENERATION_MODEL: 'gpt-4.1',
    });
    expect(set.credits).to.deep.equal({
      startingBalance: 0,
      perThousandPromptTokens: 3,
      perThousandCompletionTokens: 9,
    });
    expect(set.chainGeneration.model).to.equal('gpt-4.1');
    for (const [name, value] of [
      ['CREDITS_STARTING_BALANCE', '-1'],
      ['CREDITS_STARTING_BALANCE', '1.5'],
      ['CREDITS_PER_1K_PROMPT_TOKENS', 'ten'],
      ['CREDITS_PER_1K_COMPLETION_TOKENS', '-4'],
      ['CHAIN_GENERATION_TIMEOUT_MS', '0'],
    ] as const)
      expect(() => loadConfig({ ...base, [name]: value }), `${name}=${value}`).to.throw(name);
  });
});
