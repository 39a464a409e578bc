import { expect } from 'chai';
import request from 'supertest';
import { createRunnableChain, finished, obj, startRun, str, userText, type Run } from '@test/helpers/chains';
import { closeTestEnv, testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { startTestWorker } from '@test/helpers/worker';

const STATE_MAX = 64 * 1024;

// CHAIN_FANOUT_MAX (1000 by default, as in the test stack): a fan-out step runs over at most that many elements.
// CHAIN_STATE_MAX_BYTES: a run's state, and one element's output, stay far below a database document's 16 MB.
describe('chain fan-out ceiling (CHAIN_FANOUT_MAX) and state size (CHAIN_STATE_MAX_BYTES)', function () {
  this.timeout(300_000);
  const suite = {} as { env: TestEnv; org: TestOrg };
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  before(async () => {
    suite.env = await testEnv();
    // More elements at a time than the default 8: the run at the ceiling asks the model 1000 times. A run's state
    // may hold 64 KB here (CHAIN_STATE_MAX_BYTES; 8 MB by default), so a test answer can go over it.
    const chains = { ...suite.env.config.chains, fanOutConcurrency: 32, stateMaxBytes: STATE_MAX };
    worker = await startTestWorker({ config: { ...suite.env.config, chains } });
  });
  after(async () => {
    await worker.stop();
    await closeTestEnv();
  });
  beforeEach(async () => {
    suite.org = await createTestOrg(suite.env, 'Fan-out Limit Org');
  });
  const items = (n: number) => Array.from({ length: n }, (_, i) => i);

  async function runsOf(chainId: string) {
    const { env, org } = suite;
    const res = await as(env, org.owner.token)
      .get(org.path(`/chains/${chainId}/runs?limit=100`))
      .expect(200);
    return res.body.items as Run[];
  }

  it('refuses a run whose input holds more elements than the ceiling (400), and runs one at the ceiling', async () => {
    const { env, org } = suite;
    expect(env.config.chains.fanOutMax).to.equal(1000);
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'intro', instructions: 'Say hi', outputSchema: obj({ hi: str }) },
      {
        stepOrder: 2,
        name: 'each',
        forEachElement: '$.input.items',
        instructions: 'Item {{element}}',
        outputSchema: obj({ n: str }),
      },
    ]);
    chain.answer((body) =>
      userText(body).startsWith('Item')
        ? { content: JSON.stringify({ n: userText(body).slice(5) }) }
        : { content: '{"hi":"hi"}' },
    );
    const refused = await as(env, org.chat.token)
      .post(org.path(`/chains/${chain.chainId}/run`), { payload: { items: items(1001) } })
      .expect(400);
    expect(refused.body.error.code).to.equal('fanout_too_large');
    expect(refused.body.error.message).to.equal(
      'step 2 (each): forEachElement $.input.items selects 1001 elements; a fan-out step runs over at most 1000 (CHAIN_FANOUT_MAX)',
    );
    // Refused before anything was stored or asked.
    expect(await runsOf(chain.chainId)).to.have.length(0);
    expect(chain.calls()).to.have.length(0);

    const { runId } = await startRun(env, org, chain.chainId, { payload: { items: items(1000) } });
    const run = await finished(env, org, chain.chainId, runId, 240_000);
    expect(run.status, run.statusMessage ?? '').to.equal('success');
    expect(run.state.n).to.have.length(1000);
    expect((run.state.n as string[])[999]).to.equal('999');
    expect(chain.calls()).to.have.length(1001);
  });

  it("fails the run, asking and billing nothing for the fan-out, when a step's output is over the ceiling", async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'list', instructions: 'List', outputSchema: obj({ things: { type: 'array' } }) },
      { stepOrder: 2, name: 'each', forEachElement: '$.things', instructions: 'Thing {{element}}' },
    ]);
    chain.answer((body) =>
      userText(body) === 'List' ? { content: JSON.stringify({ things: items(1001) }) } : { content: 'ok' },
    );
    const credits = env.deps.services.credits;
    const { runId } = await startRun(env, org, chain.chainId, { payload: {} });
    const run = await finished(env, org, chain.chainId, runId);
    expect(run.status).to.equal('failed');
    expect(run.statusMessage).to.equal(
      'step 2 (each) failed: forEachElement $.things selects 1001 elements; a fan-out step runs over at most 1000 (CHAIN_FANOUT_MAX)',
    );
    expect(run.steps.map((s) => [s.stepOrder, s.outcome, s.modelCalls])).to.deep.equal([
      [1, 'success', 1],
      [2, 'failed', 0],
    ]);
    // Only the listing step asked the model, and only it was paid for.
    expect(chain.calls()).to.have.length(1);
    const steps = await env.deps.repos.tenant(org.organizationId).chains.listSteps(chain.chainId);
    const [step1, step2] = [1, 2].map((n) => steps.find((s) => s.stepOrder === n)!._id);
    const summary = await credits.summary(org.organizationId);
    expect(summary.recentUsage.map((u) => u.reference)).to.deep.equal([step1]);
    expect(summary.balance).to.equal(env.config.credits.startingBalance - summary.recentUsage[0]!.cost);
    // No element was stored for the step.
    const stored = await env.deps.repos.tenant(org.organizationId).chainRuns.elementOutputs(runId, step2!);
    expect(stored).to.have.length(0);
  });

  it('fails the run of a webhook delivery whose body is over the ceiling, asking the model nothing', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'each', forEachElement: '$.input.items', instructions: 'Item {{element}}' },
    ]);
    chain.answer({ content: 'ok' });
    const owner = as(env, org.owner.token);
    const webhook = await owner.post(org.path('/webhooks'), { name: 'Bulk events' }).expect(201);
    const webhookId = webhook.body.webhookId as string;
    await owner
      .post(org.path(`/webhooks/${webhookId}/handlers`), {
        handlerType: 'action-chain',
        actionChainId: chain.chainId,
        instructions: 'Handle the event',
      })
      .expect(201);
    await request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .send({ items: items(1001) })
      .expect(200);
    const [run] = await eventually(async () => {
      const runs = await runsOf(chain.chainId);
      return runs.length === 1 && runs[0]!.status === 'failed' && runs;
    }, 120_000);
    expect(run!.statusMessage).to.equal(
      'step 1 (each) failed: forEachElement $.input.items selects 1001 elements; a fan-out step runs over at most 1000 (CHAIN_FANOUT_MAX)',
    );
    expect(chain.calls()).to.have.length(0);
    const summary = await env.deps.services.credits.summary(org.organizationId);
    expect(summary.recentUsage).to.have.length(0);
    expect(summary.balance).to.equal(env.config.credits.startingBalance);
  });

  it("fails the step whose answer would make the run's state larger than CHAIN_STATE_MAX_BYTES", async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'big', instructions: 'Big', outputSchema: obj({ text: str }) },
      { stepOrder: 2, name: 'after', instructions: 'After' },
    ]);
    chain.answer({ content: JSON.stringify({ text: 'x'.repeat(STATE_MAX) }) });
    const { runId } = await startRun(env, org, chain.chainId, { payload: {} });
    const run = await finished(env, org, chain.chainId, runId);
    expect(run.status).to.equal('failed');
    expect(run.statusMessage).to.match(
      /^step 1 \(big\) failed: the run's state would hold \d+ bytes; at most 65536 \(CHAIN_STATE_MAX_BYTES\)$/,
    );
    expect(run.state).to.deep.equal({ input: {} });
    // The call that was made is paid for; the next step never ran.
    expect(chain.calls()).to.have.length(1);
    expect((await env.deps.services.credits.summary(org.organizationId)).recentUsage).to.have.length(1);
  });

  it('fails a fan-out whose element output, or whose outputs together, would be over CHAIN_STATE_MAX_BYTES', async () => {
    const { env, org } = suite;
    const step = { stepOrder: 1, name: 'each', forEachElement: '$.input.sizes', instructions: '{{element}}' };
    const chain = await createRunnableChain(env, org, [step]);
    chain.answer((body) => ({ content: 'y'.repeat(Number(userText(body))) }));
    const one = await startRun(env, org, chain.chainId, { payload: { sizes: [10, STATE_MAX + 10] } });
    const tooLarge = await finished(env, org, chain.chainId, one.runId);
    expect(tooLarge.status).to.equal('failed');
    expect(tooLarge.statusMessage).to.match(
      /^step 1 \(each\) failed: element 1: the element's output would hold \d+ bytes; at most 65536 \(CHAIN_STATE_MAX_BYTES\)$/,
    );
    const quarter = Math.floor(STATE_MAX / 4);
    const all = await startRun(env, org, chain.chainId, {
      payload: { sizes: [quarter, quarter, quarter, quarter] },
    });
    const together = await finished(env, org, chain.chainId, all.runId);
    expect(together.status).to.equal('failed');
    expect(together.statusMessage).to.match(/^step 1 \(each\) failed: the run's state would hold \d+ bytes/);
  });

  it('does not keep a model answer nested deeper than 32 levels in the state', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'deep', instructions: 'Deep', outputSchema: obj({ doc: { type: 'object' } }) },
    ]);
    let doc: unknown = 'leaf';
    for (let i = 0; i < 40; i++) doc = { a: doc };
    chain.answer({ content: JSON.stringify({ doc }) });
    const { runId } = await startRun(env, org, chain.chainId, { payload: {} });
    const run = await finished(env, org, chain.chainId, runId);
    expect(run.status).to.equal('failed');
    expect(run.statusMessage).to.equal(
      'step 1 (deep) failed: the answer did not fit the output schema after 3 attempts: the answer nests deeper than 32 levels',
    );
    expect(run.state).to.deep.equal({ input: {} });
  });
});
