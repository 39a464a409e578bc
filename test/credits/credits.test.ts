import { expect } from 'chai';
import { CreditsService } from '@lib/credits/credits.service';
import { InsufficientCreditsError } from '@lib/errors';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg } from '@test/helpers/org';
import { holdBack } from '@test/helpers/held-repos';

describe('organization credits', () => {
  let env: TestEnv;
  let start: number;
  before(async () => {
    env = await testEnv();
    start = env.config.credits.startingBalance;
  });
  const credits = () => env.deps.services.credits;
  /** What a call of this many tokens costs at the configured prices. */
  const costOf = (prompt: number, completion: number) => {
    const { perThousandPromptTokens: p, perThousandCompletionTokens: c } = env.config.credits;
    return Math.ceil((prompt * p + completion * c) / 1000);
  };

  it('records each model call with its tokens and cost, and debits the cost', async () => {
    const org = await createTestOrg(env);
    const recorded = await credits().recordUsage(org.organizationId, {
      purpose: 'chain-step',
      model: 'gpt-4o-mini',
      usage: { prompt_tokens: 1234, completion_tokens: 321 },
      userId: org.admin.userId,
      reference: 'chain-run-x step 1',
    });
    const cost = costOf(1234, 321);
    expect(cost).to.be.greaterThan(0);
    expect(recorded).to.include({ promptTokens: 1234, completionTokens: 321, cost, balance: start - cost });
    const summary = await credits().summary(org.organizationId);
    expect(summary).to.include({ balance: start - cost, granted: start, spent: cost });
    expect(summary.recentUsage).to.have.length(1);
    expect(summary.recentUsage[0]).to.include({
      usageId: recorded.usageId,
      purpose: 'chain-step',
      model: 'gpt-4o-mini',
      promptTokens: 1234,
      completionTokens: 321,
      cost,
      balanceAfter: start - cost,
      userId: org.admin.userId,
      reference: 'chain-run-x step 1',
    });
    // A server that reports no usage is recorded as such, at 0 tokens.
    const unreported = await credits().recordUsage(org.organizationId, {
      purpose: 'chain-step',
      model: 'local-model',
      usage: undefined,
    });
    expect(unreported).to.include({ cost: 0, balance: start - cost });
    const [latest] = await env.deps.repos.tenant(org.organizationId).llmUsage.recent(1);
    expect(latest).to.include({ model: 'local-model', usageReported: false, promptTokens: 0 });
  });

  it('loses no debit or grant under concurrency, from the very first use of the account', async () => {
    const org = await createTestOrg(env);
    const calls = 30;
    const cost = costOf(1000, 0);
    // A grant no sum of up to 30 debits can offset (cost × Δdebits = grant × Δgrants has no solution in range),
    // so distinct balances below mean distinct readings, whatever the interleaving of debits and grants.
    const grant = 1003;
    const results = await Promise.all([
      ...Array.from({ length: calls }, () =>
        credits().recordUsage(org.organizationId, {
          purpose: 'chain-step',
          model: 'gpt-4o-mini',
          usage: { prompt_tokens: 1000, completion_tokens: 0 },
        }),
      ),
      ...Array.from({ length: 10 }, () => credits().grant(org.organizationId, grant)),
    ]);
    expect(await credits().balance(org.organizationId)).to.equal(start - calls * cost + 10 * grant);
    const summary = await credits().operatorSummary(org.organizationId, 100);
    expect(summary).to.include({ spent: calls * cost, granted: start + 10 * grant });
    expect(summary.recentUsage).to.have.length(calls);
    // Each debit saw its own balance: no two calls were charged against the same reading.
    const balancesAfter = results.map((r) => r.balance);
    expect(new Set(balancesAfter).size).to.equal(results.length);
    // The account opened exactly once, however many first uses raced.
    const starting = summary.recentGrants.filter((g) => g.note === 'starting balance');
    expect(starting).to.have.length(1);
    expect(summary.recentGrants).to.have.length(11);
  });

  it('lets a call start only while the balance is positive', async () => {
    const org = await createTestOrg(env);
    await credits().requireCredits(org.organizationId);
    await credits().grant(org.organizationId, -start, 'test: empty the account');
    const refused = await credits()
      .requireCredits(org.organizationId)
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(refused).to.be.instanceOf(InsufficientCreditsError);
    expect(refused).to.include({ status: 402, code: 'insufficient_credits', balance: 0 });
    await credits().grant(org.organizationId, 1);
    await credits().requireCredits(org.organizationId);
  });

  it('waits in settled() for every usage record still being written (closeDeps does, before the database closes)', async () => {
    const org = await createTestOrg(env);
    // A service whose usage records are held back until the test lets them through.
    const { repos, release } = holdBack(env.deps.repos, 'llmUsage', 'create');
    const held = new CreditsService(repos, env.config.credits, env.deps.services.organization);
    const call = { purpose: 'chain-step' as const, model: 'gpt-4o-mini', usage: { prompt_tokens: 10 } };
    const recording = held.recordUsage(org.organizationId, call);
    let settled = false;
    void held.settled().then(() => (settled = true));
    // Many round trips' worth of work later, the record is still held and settled() still waiting.
    for (let i = 0; i < 100; i++) await credits().balance(org.organizationId);
    expect(settled).to.equal(false);
    release();
    await held.settled();
    const { usageId } = await recording;
    expect((await credits().summary(org.organizationId)).recentUsage.map((u) => u.usageId)).to.deep.equal([
      usageId,
    ]);
    // Nothing left to wait for.
    await held.settled();
  });

  it('refuses grants of nothing, of fractions and to organizations that do not exist', async () => {
    const org = await createTestOrg(env);
    for (const amount of [0, 1.5, Number.NaN, 2e9])
      await credits()
        .grant(org.organizationId, amount)
        .then(
          () => expect.fail(`granted ${amount}`),
          (err: unknown) => expect(err, String(amount)).to.include({ status: 400 }),
        );
    await credits()
      .grant('org_missing', 10)
      .then(
        () => expect.fail('granted to a missing organization'),
        (err: unknown) => expect(err).to.include({ status: 404 }),
      );
    expect(await credits().balance(org.organizationId)).to.equal(start);
  });

  describe('GET /orgs/{organizationId}/credits', () => {
    it('shows any member the balance and newest usage, unless billing is visible to owners only', async () => {
      const org = await createTestOrg(env);
      for (let i = 1; i <= 3; i++)
        await credits().recordUsage(org.organizationId, {
          purpose: 'chain-from-prompt',
          model: `model-${i}`,
          usage: { prompt_tokens: 100 * i, completion_tokens: 10 },
        });
      const res = await as(env, org.chat.token).get(org.path('/credits?usageLimit=2')).expect(200);
      expect(res.body).to.include({ organizationId: org.organizationId, granted: start });
      expect(res.body.pricing).to.deep.equal({
        perThousandPromptTokens: env.config.credits.perThousandPromptTokens,
        perThousandCompletionTokens: env.config.credits.perThousandCompletionTokens,
      });
      expect(res.body.recentUsage.map((u: { model: string }) => u.model)).to.deep.equal([
        'model-3',
        'model-2',
      ]);
      const none = await as(env, org.admin.token).get(org.path('/credits?usageLimit=0')).expect(200);
      expect(none.body.recentUsage).to.deep.equal([]);
      expect(none.body.balance).to.equal(res.body.balance);

      await as(env, org.owner.token).put(org.path(), { billingVisibility: 'owners' }).expect(200);
      const hidden = await as(env, org.admin.token).get(org.path('/credits')).expect(403);
      expect(hidden.body.error.code).to.equal('forbidden');
      await as(env, org.owner.token).get(org.path('/credits')).expect(200);
    });

    it('lists usage recorded within one millisecond newest first, in the order it was recorded', async () => {
      const org = await createTestOrg(env);
      // Every call below lands in the same millisecond: their createdAt ties, and only the order of writing is left.
      const RealDate = Date;
      const frozen = RealDate.now();
      globalThis.Date = class extends RealDate {
        constructor(...args: ConstructorParameters<typeof Date>) {
          if (args.length) super(...args);
          else super(frozen);
        }
        static override now() {
          return frozen;
        }
      } as DateConstructor;
      try {
        for (let i = 1; i <= 8; i++)
          await credits().recordUsage(org.organizationId, {
            purpose: 'chain-from-prompt',
            model: `model-${i}`,
            usage: { prompt_tokens: 1, completion_tokens: 1 },
          });
      } finally {
        globalThis.Date = RealDate;
      }
      const res = await as(env, org.admin.token).get(org.path('/credits?usageLimit=8')).expect(200);
      expect(res.body.recentUsage.map((u: { model: string }) => u.model)).to.deep.equal(
        [8, 7, 6, 5, 4, 3, 2, 1].map((i) => `model-${i}`),
      );
    });

    it("refuses another organization's credential and bad limits", async () => {
      const [a, b] = await Promise.all([createTestOrg(env), createTestOrg(env)]);
      await as(env, b.owner.token).get(a.path('/credits')).expect(401);
      await as(env, b.apiKey).get(a.path('/credits')).expect(401);
      for (const q of ['usageLimit=101', 'usageLimit=-1', 'usageLimit=x', 'other=1'])
        await as(env, a.owner.token)
          .get(a.path(`/credits?${q}`))
          .expect(400);
    });
  });
});
