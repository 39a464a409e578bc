import { expect } from 'chai';
import type { ChainStepInput, ChainStepOutcome, UnwrittenStep } from '@contracts';
import { createActivities } from '@activities/index';
import { MAX_UNWRITTEN_CHARS } from '@lib/chains/engine/step-runner';
import { createRunnableChain, obj, userText } from '@test/helpers/chains';
import { plannedExecution, runActivity, within } from '@test/helpers/chain-steps';
import { holdBack } from '@test/helpers/held-repos';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';

/**
 * A chain step whose workflow hands its result on (handsOnResults) returns before the result is written; the
 * execution's next activity makes sure it is written before it goes on: this worker's write of it, or, when that
 * write was lost with its worker, a write from what the workflow handed on (`previous`). The steps run here as
 * activities outside a workflow, as two workers would run them.
 */
describe('chain step results handed on', () => {
  let env: TestEnv;
  let org: TestOrg;
  before(async () => {
    env = await testEnv();
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Hand On Org');
  });

  /** A worker's chain activities; with `holding`, that step's result writes (`held`) wait until `release()`. */
  function worker(holding?: string) {
    const { repos, release, held } = holdBack(
      env.deps.repos,
      'chainRuns',
      'recordStep',
      (args) => (args[2] as { stepId: string }).stepId === holding,
    );
    const activities = createActivities({ ...env.deps, repos });
    return {
      step: (input: ChainStepInput): Promise<ChainStepOutcome> =>
        runActivity((i: ChainStepInput) => activities.runChainStep(i), input),
      finish: (input: Parameters<typeof activities.finishChainRun>[0]) =>
        runActivity((i: typeof input) => activities.finishChainRun(i), input),
      release,
      held,
    };
  }

  async function twoStepRun(firstAnswer = '{"a":"1"}') {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'first', outputSchema: obj({ a: { type: 'string' } }) },
      {
        stepOrder: 2,
        name: 'second',
        instructions: 'after {{a}}',
        outputSchema: obj({ b: { type: 'string' } }),
      },
    ]);
    let answers = 0;
    chain.answer(() => ({ content: answers++ === 0 ? firstAnswer : '{"b":"2"}' }));
    const { execution, stepIds } = await plannedExecution(env, org, chain.chainId);
    const [first, second] = stepIds as [string, string];
    return {
      chain,
      execution: { ...execution, handsOnResults: true },
      first,
      second,
    };
  }

  const run = async (runId: string) =>
    (await env.deps.repos.tenant(org.organizationId).chainRuns.get(runId))!;

  async function firstReturnsUnwritten(
    a: ReturnType<typeof worker>,
    r: Awaited<ReturnType<typeof twoStepRun>>,
  ) {
    const outcome = await a.step({ ...r.execution, stepId: r.first, marksRunning: true });
    expect(outcome.kind).to.equal('success');
    const unwritten = (outcome as { unwritten?: UnwrittenStep }).unwritten!;
    expect(unwritten).to.include({ stepId: r.first, stepOrder: 1, name: 'first', modelCalls: 1 });
    expect(unwritten.fields).to.deep.equal({ a: '1' });
    // Returned, and not written yet.
    expect((await run(r.execution.runId)).stepResults[r.first]).to.equal(undefined);
    return unwritten;
  }

  it('returns a step before its result is written; the next step goes on only once it is', async () => {
    const r = await twoStepRun();
    const a = worker(r.first);
    const previous = await firstReturnsUnwritten(a, r);

    let ended = false;
    const next = a.step({ ...r.execution, stepId: r.second, finishesRun: true, previous });
    void next.finally(() => (ended = true));
    expect(
      await within(env, org, r.execution.runId, 200, () => ended || r.chain.calls().length > 1),
    ).to.equal(false);

    a.release();
    // The run's last step writes its result before it returns (and ends the run).
    expect(await next).to.deep.equal({ kind: 'success' });
    const done = await run(r.execution.runId);
    expect(done.status).to.equal('success');
    expect(JSON.parse(done.stateJson)).to.deep.equal({ input: {}, a: '1', b: '2' });
    expect(done.stepResults[r.first]).to.include({ outcome: 'success', modelCalls: 1, generation: 1 });
    expect(done.stepResults[r.first]!.finishedAt.toISOString()).to.equal(previous.finishedAt);
    expect(done.stepResults[r.second]).to.include({ outcome: 'success', generation: 1 });
    expect(r.chain.calls()).to.have.length(2);
  });

  it('writes a result lost with its worker from what the workflow handed on, without asking again', async () => {
    const r = await twoStepRun();
    const a = worker(r.first);
    const previous = await firstReturnsUnwritten(a, r);

    // Worker a never writes it (it is gone); the next step runs on worker b.
    const b = worker();
    expect(await b.step({ ...r.execution, stepId: r.second, finishesRun: true, previous })).to.deep.equal({
      kind: 'success',
    });
    const done = await run(r.execution.runId);
    expect(done.status).to.equal('success');
    expect(JSON.parse(done.stateJson)).to.deep.equal({ input: {}, a: '1', b: '2' });
    expect(done.stepResults[r.first]).to.include({ outcome: 'success', modelCalls: 1 });
    expect(done.stepResults[r.first]!.finishedAt.toISOString()).to.equal(previous.finishedAt);
    // The first step was asked once, and the second step over its answer.
    expect(r.chain.calls()).to.have.length(2);
    expect(userText(r.chain.calls()[1]!)).to.equal('after 1');

    // Worker a's write, if it ever comes, finds the state moved on and writes nothing.
    a.release();
    expect(await Promise.all(a.held)).to.deep.equal([false]);
    expect(await run(r.execution.runId)).to.deep.equal(done);
  });

  it('keeps the result handed on when the run fails at the next step', async () => {
    const r = await twoStepRun();
    const a = worker(r.first);
    const previous = await firstReturnsUnwritten(a, r);

    await worker().finish({
      ...r.execution,
      status: 'failed',
      statusMessage: 'step 2 (second) failed: it broke',
      failedStepId: r.second,
      previous,
    });
    const done = await run(r.execution.runId);
    expect(done.status).to.equal('failed');
    expect(done.stepResults[r.first]).to.include({ outcome: 'success' });
    expect(done.stepResults[r.second]).to.include({
      outcome: 'failed',
      detail: 'step 2 (second) failed: it broke',
    });
    expect(JSON.parse(done.stateJson)).to.deep.equal({ input: {}, a: '1' });
  });

  it('writes a large result before returning it', async () => {
    const large = 'x'.repeat(MAX_UNWRITTEN_CHARS);
    const r = await twoStepRun(JSON.stringify({ a: large }));
    const outcome = await worker().step({ ...r.execution, stepId: r.first, marksRunning: true });
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(JSON.parse((await run(r.execution.runId)).stateJson)).to.deep.equal({ input: {}, a: large });
  });
});
