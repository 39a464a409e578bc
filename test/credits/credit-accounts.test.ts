import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CreditsService } from '@lib/credits/credits.service';
import type { Metrics } from '@lib/observability/metrics';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg } from '@test/helpers/org';
import { ROOT } from '@test/helpers/paths';

const run = promisify(execFile);

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

  describe('operator CLI', () => {
    const cli = (...args: string[]) =>
      run('npm', ['run', '--silent', 'cli', '--', ...args], {
        cwd: ROOT,
        env: { ...process.env, JWT_SECRET: env.config.auth.jwtSecret, MONGODB_URI: env.config.mongodbUri },
      });
    const json = async (...args: string[]) => {
      const { stdout } = await cli(...args);
      const lines = stdout.trim().split('\n');
      expect(lines).to.have.length(1);
      return JSON.parse(lines[0]!) as Record<string, unknown>;
    };

    it('grants credits, corrects them with a negative amount, and shows balance, usage and grants', async function () {
      this.timeout(120_000);
      const org = await createTestOrg(env);
      const id = org.organizationId;
      await credits().recordUsage(id, {
        purpose: 'chain-from-prompt',
        model: 'gpt-4o-mini',
        usage: { prompt_tokens: 500, completion_tokens: 100 },
      });
      const cost = costOf(500, 100);
      const granted = await json(
        'credits',
        'grant',
        '--org',
        id,
        '--amount',
        '250',
        '--note',
        'pilot top-up',
      );
      expect(granted).to.include({ organizationId: id, amount: 250, balance: start - cost + 250 });
      const corrected = await json('credits', 'grant', '--org', id, '--amount=-50');
      expect(corrected).to.include({ amount: -50, balance: start - cost + 200 });
      const shown = await json('credits', 'show', '--org', id);
      expect(shown).to.include({ balance: start - cost + 200, granted: start + 200, spent: cost });
      expect(shown.recentUsage).to.have.length(1);
      expect((shown.recentUsage as object[])[0]).to.include({ purpose: 'chain-from-prompt', cost });
      const grants = shown.recentGrants as Array<{ amount: number; note: string | null }>;
      expect(grants.map((g) => [g.amount, g.note])).to.deep.equal([
        [-50, null],
        [250, 'pilot top-up'],
        [start, 'starting balance'],
      ]);

      const fails = async (args: string[], code: number, message: string) => {
        const err = (await cli(...args).then(
          () => expect.fail(`${args.join(' ')} succeeded`),
          (e: unknown) => e,
        )) as { code: number; stderr: string };
        expect(err.code, args.join(' ')).to.equal(code);
        expect(err.stderr).to.contain(message);
      };
      await fails(['credits', 'grant', '--org', id, '--amount', '1.5'], 2, '--amount must be a whole number');
      await fails(['credits', 'grant', '--org', 'org_missing', '--amount', '5'], 1, 'not found');
      expect(await credits().balance(id)).to.equal(start - cost + 200);
    });
  });

  describe('account rules at their edges', () => {
    const refusedWith = (p: Promise<unknown>) =>
      p.then(
        () => expect.fail('accepted'),
        (err: unknown) => err,
      );

    it('shows an account never used at its starting balance, with nothing spent and no records', async () => {
      const org = await createTestOrg(env);
      const summary = await credits().operatorSummary(org.organizationId);
      expect(summary).to.include({
        organizationId: org.organizationId,
        balance: start,
        granted: start,
        spent: 0,
      });
      expect(summary.recentUsage).to.deep.equal([]);
      expect(summary.recentGrants).to.deep.equal([]);
      expect(await refusedWith(credits().operatorSummary('org_missing'))).to.include({ status: 404 });
    });

    it('takes only whole debits of 0 credits or more; a debit of 0 opens the account and changes nothing', async () => {
      const org = await createTestOrg(env);
      for (const amount of [-1, 1.5, Number.NaN])
        expect(await refusedWith(credits().debit(org.organizationId, amount)), String(amount))
          .to.be.instanceOf(Error)
          .with.property('message', `a debit is a whole number of credits ≥ 0, not ${amount}`);
      expect(await credits().debit(org.organizationId, 0)).to.equal(start);
      expect(await credits().debit(org.organizationId, 7)).to.equal(start - 7);
    });

    it('grants and corrects at most 1,000,000,000 credits at a time, and records each grant with its note', async () => {
      const org = await createTestOrg(env);
      const id = org.organizationId;
      expect(await credits().grant(id, 1_000_000_000)).to.include({
        amount: 1_000_000_000,
        balance: start + 1e9,
      });
      expect(await credits().grant(id, -1_000_000_000, 'back')).to.include({ balance: start });
      for (const amount of [1_000_000_001, -1_000_000_001])
        expect(await refusedWith(credits().grant(id, amount)), String(amount)).to.include({ status: 400 });
      const summary = await credits().operatorSummary(id, 2);
      expect(summary).to.include({ balance: start, granted: start });
      expect(summary.recentGrants.map((g) => [g.amount, g.note, g.balanceAfter])).to.deep.equal([
        [-1_000_000_000, 'back', start],
        [1_000_000_000, null, start + 1e9],
      ]);
      expect(summary.recentGrants[0]!.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // A limit of 0 lists none.
      const none = await credits().operatorSummary(id, 0);
      expect(none.recentGrants).to.deep.equal([]);
      expect(none.recentUsage).to.deep.equal([]);
    });

    it('opens an account with a starting balance of 0 without a grant record, and refuses calls at 0', async () => {
      const org = await createTestOrg(env);
      const empty = new CreditsService(
        env.deps.repos,
        { ...env.config.credits, startingBalance: 0 },
        env.deps.services.organization,
      );
      const refused = await refusedWith(empty.requireCredits(org.organizationId));
      expect(refused).to.include({ status: 402, balance: 0 });
      const call = { purpose: 'analysis' as const, model: 'm', usage: { completion_tokens: 1000 } };
      const recorded = await empty.recordUsage(org.organizationId, call);
      expect(recorded.balance).to.equal(-costOf(0, 1000));
      const summary = await empty.operatorSummary(org.organizationId);
      expect(summary).to.include({ balance: -costOf(0, 1000), granted: 0, spent: costOf(0, 1000) });
      expect(summary.recentGrants).to.deep.equal([]);
    });

    it('counts a call whose server reported only one of the two token counts as reported usage', async () => {
      const org = await createTestOrg(env);
      const usage = env.deps.repos.tenant(org.organizationId).llmUsage;
      for (const [reported, promptTokens, completionTokens] of [
        [{ prompt_tokens: 5 }, 5, 0],
        [{ completion_tokens: 6 }, 0, 6],
      ] as const) {
        await credits().recordUsage(org.organizationId, { purpose: 'analysis', model: 'm', usage: reported });
        expect((await usage.recent(1))[0]).to.include({
          usageReported: true,
          promptTokens,
          completionTokens,
        });
      }
      // Without a member or a reference, the record says so with null.
      expect((await usage.recent(1))[0]).to.include({ userId: null, reference: null });
    });

    it("counts each billed call's prompt and completion tokens for the organization's metrics", async () => {
      const org = await createTestOrg(env);
      const counted: Array<[string, string, number]> = [];
      const llmTokens = {
        inc: (labels: { organization_id: string; kind: string }, n: number) =>
          counted.push([labels.organization_id, labels.kind, n]),
      };
      const metered = new CreditsService(env.deps.repos, env.config.credits, env.deps.services.organization, {
        llmTokens: llmTokens as unknown as Metrics['llmTokens'],
      });
      await metered.recordUsage(org.organizationId, {
        purpose: 'analysis',
        model: 'm',
        usage: { prompt_tokens: 12, completion_tokens: 3 },
      });
      expect(counted).to.deep.equal([
        [org.organizationId, 'prompt', 12],
        [org.organizationId, 'completion', 3],
      ]);
    });

    it('says why a grant or a summary is refused: the amount rule, a missing organization, owners-only billing', async () => {
      const org = await createTestOrg(env);
      expect(await refusedWith(credits().grant(org.organizationId, 0))).to.include({
        status: 400,
        message: 'the amount is a whole number of credits, not 0, at most 1000000000 either way',
      });
      for (const refused of [credits().grant('org_gone', 5), credits().operatorSummary('org_gone')])
        expect(await refusedWith(refused)).to.include({
          status: 404,
          message: 'organization org_gone not found',
        });
      // A member's request for an organization that is gone (deleted after the credential was checked).
      const member = { organizationId: 'org_gone', capabilities: new Set<never>() };
      expect(await refusedWith(credits().summaryFor(member, 5))).to.include({
        status: 404,
        message: 'organization not found',
      });
      await as(env, org.owner.token).put(org.path(), { billingVisibility: 'owners' }).expect(200);
      const res = await as(env, org.admin.token).get(org.path('/credits')).expect(403);
      expect(res.body.error.message).to.equal(
        'billing information is visible to owners only (billingVisibility: owners)',
      );
    });
  });
});
