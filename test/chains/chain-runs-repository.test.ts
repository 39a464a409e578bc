import { expect } from 'chai';
import { orgPerTest } from '@test/helpers/org';
import { rawCollection } from '@test/helpers/store';

/*
 * What the chain run repository keeps against the real database: a re-run shown pending keeps the run's start, one
 * shown running starts now; a refused start fails a running execution too, never a finished one; a run stored
 * before state versions counts as version 0; a fan-out step's elements are kept by run, step and index (more than
 * one insert batch of them too), read in index order and only the organization's; a chain's removal takes its runs
 * and their elements and nothing else.
 */
interface Element {
  _id: string;
  organizationId: string;
  runId: string;
  stepId: string;
  index: number;
  elementJson: string;
  fingerprint: string;
  outputJson: string | null;
  modelCalls: number;
}

describe('chain run repository against the database', function () {
  this.timeout(120_000);
  const world = orgPerTest('Chain runs store');
  const runs = () => world.env.deps.repos.tenant(world.org.organizationId).chainRuns;
  const id = (s: string) => `${s}_${world.tag}`;
  const other = () => `org_other_${world.tag}`;
  const elements = () => rawCollection<Element>(world.env, 'action_chain_fan_out_results');

  const create = (runId: string, actionChainId = id('chn'), status: 'pending' | 'running' = 'pending') =>
    runs().create({
      runId,
      actionChainId,
      triggerType: 'api',
      stateJson: '{"input":{}}',
      messageId: id('msg'),
      startedByUserId: world.org.owner.userId,
      status,
    });

  /** An element as putElements stores it, in any organization, in the order a test inserts them. */
  const storeElement = (
    runId: string,
    stepId: string,
    index: number,
    organizationId = world.org.organizationId,
  ) =>
    elements().insertOne({
      _id: `${runId}:${stepId}:${index}`,
      organizationId,
      runId,
      stepId,
      index,
      elementJson: String(index),
      fingerprint: 'f',
      outputJson: null,
      modelCalls: 0,
    });

  it('keeps the start of a re-run shown pending, and starts one shown running now', async () => {
    const runId = id('run');
    await create(runId);
    const started = (await runs().markRunning(runId, 1))!.startedAt as Date;
    await runs().finish(runId, 1, 'failed', 'step 1 failed');
    const pending = await runs().rerun(runId, {
      status: 'pending',
      messageId: id('m2'),
      startedByUserId: 'u',
    });
    expect(pending).to.deep.include({
      generation: 2,
      status: 'pending',
      statusMessage: null,
      finishedAt: null,
    });
    expect(pending!.startedAt).to.deep.equal(started);

    await runs().finish(runId, 2, 'failed', 'again');
    const before = Date.now();
    const running = await runs().rerun(runId, {
      status: 'running',
      messageId: id('m3'),
      startedByUserId: 'u',
    });
    expect(running!.generation).to.equal(3);
    expect((running!.startedAt as Date).getTime()).to.be.at.least(before);
    // without anyState, a run still running is not re-run
    expect(
      await runs().rerun(runId, { status: 'running', messageId: id('m4'), startedByUserId: 'u' }),
    ).to.equal(null);
  });

  it('fails a pending or running execution whose start was refused, never a finished one', async () => {
    const running = id('run_running');
    await create(running);
    await runs().markRunning(running, 1);
    await runs().failUnstarted(running, 1, 'refused');
    expect(await runs().get(running)).to.deep.include({
      status: 'failed',
      statusMessage: 'refused',
      startedAt: null,
    });

    const done = id('run_done');
    await create(done);
    await runs().finish(done, 1, 'success', null);
    await runs().failUnstarted(done, 1, 'refused');
    expect(await runs().get(done)).to.deep.include({ status: 'success', statusMessage: null });
  });

  it('records a step on a run stored before state versions as at version 0', async () => {
    const runId = id('run_legacy');
    await create(runId);
    await rawCollection<{ _id: string }>(world.env, 'action_chain_runs').updateOne(
      { _id: runId },
      { $unset: { stateVersion: '' } },
    );
    const result = {
      stepId: 'stp_1',
      stepOrder: 1,
      name: 'one',
      outcome: 'success' as const,
      detail: null,
      modelCalls: 1,
      generation: 1,
      finishedAt: new Date('2026-01-01T00:00:00.000Z'),
    };
    expect(await runs().recordStep(runId, 1, result, '{"input":{},"a":1}', 0)).to.equal(true);
    const run = await runs().get(runId);
    expect(run!.stateJson).to.equal('{"input":{},"a":1}');
    expect(run!.stateVersion).to.equal(1);
    // the version has moved on: a write from the copy at 0 is refused
    expect(await runs().recordStep(runId, 1, result, '{"input":{},"a":2}', 0)).to.equal(false);
    // a failed step's detail as given; a step without a name stored with an empty one
    const failed = {
      ...result,
      stepId: 'stp_2',
      stepOrder: 2,
      name: undefined as unknown as string,
      outcome: 'failed' as const,
      detail: 'the model gave up',
    };
    expect(await runs().recordStep(runId, 1, failed)).to.equal(true);
    expect((await runs().get(runId))!.stepResults.stp_2).to.deep.include({
      name: '',
      detail: 'the model gave up',
    });
  });

  it("stores a fan-out step's elements over more than one batch, with their fingerprint", async () => {
    const runId = id('run_many');
    const elementsIn = Array.from({ length: 1001 }, (_, i) => ({ n: i }));
    await runs().putElements(runId, 'stp_1', elementsIn, 'fp-1001');
    expect(await runs().elementsFingerprint(runId, 'stp_1')).to.equal('fp-1001');
    expect(await runs().elementsFingerprint(runId, 'stp_2')).to.equal(null);
    expect((await runs().getElement(runId, 'stp_1', 1000))?.elementJson).to.equal('{"n":1000}');
    expect(await runs().pendingElements(runId, 'stp_1', 0, 1001)).to.have.length(1001);
  });

  it('reads pending elements and outputs in index order, only those of the run, step and organization', async () => {
    const runId = id('run_fan');
    for (const index of [3, 0, 2, 1]) await storeElement(runId, 'stp_1', index);
    await storeElement(runId, 'stp_2', 0);
    await storeElement(id('run_other'), 'stp_1', 0);
    await storeElement(runId, 'stp_1', 4, other());
    await runs().putElementOutput(runId, 'stp_1', 2, { outputJson: '{"x":2}', modelCalls: 2 });

    expect(await runs().pendingElements(runId, 'stp_1', 0, 4)).to.deep.equal([0, 1, 3]);
    expect(await runs().pendingElements(runId, 'stp_1', 1, 3)).to.deep.equal([1]);
    expect(
      (await runs().elementOutputs(runId, 'stp_1')).map((e) => [e.index, e.outputJson, e.modelCalls]),
    ).to.deep.equal([
      [0, null, 0],
      [1, null, 0],
      [2, '{"x":2}', 2],
      [3, null, 0],
    ]);

    await runs().clearElements(runId, 'stp_1');
    expect(await runs().elementOutputs(runId, 'stp_1')).to.deep.equal([]);
    expect(await runs().elementOutputs(runId, 'stp_2')).to.have.length(1);
    await runs().clearElements(runId);
    expect(await runs().elementOutputs(runId, 'stp_2')).to.deep.equal([]);
    expect(await runs().elementOutputs(id('run_other'), 'stp_1')).to.have.length(1);
    expect(await elements().countDocuments({ organizationId: other() })).to.equal(1);
  });

  it("removes a chain's runs and their elements, and nothing else", async () => {
    const gone = id('run_gone');
    const kept = id('run_kept');
    await create(gone);
    await create(kept, id('chn_kept'));
    await storeElement(gone, 'stp_1', 0);
    await storeElement(kept, 'stp_1', 0);
    await storeElement(gone, 'stp_1', 1, other());
    await runs().removeForChain(id('chn'));
    expect(await runs().get(gone)).to.equal(null);
    expect(await runs().elementOutputs(gone, 'stp_1')).to.deep.equal([]);
    expect(await runs().get(kept)).to.not.equal(null);
    expect(await runs().elementOutputs(kept, 'stp_1')).to.have.length(1);
    expect(await elements().countDocuments({ organizationId: other() })).to.equal(1);
  });
});
