import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { StepResult } from '@lib/chains/chain-run.schema';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';

/**
 * The writes every chain step makes (recordStep, the debit, the usage record) and every execution makes
 * (markRunning, finish) go through the driver, not mongoose: they must store what the schema would have stored,
 * keep the timestamps, and stay inside their organization and their execution.
 */
describe('chain step writes through the driver', () => {
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  before(async () => {
    env = await testEnv();
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Step Writes Org');
    other = await createTestOrg(env, 'Step Writes Other Org');
  });
  const tenant = (o = org) => env.deps.repos.tenant(o.organizationId);
  const newRun = () =>
    tenant().chainRuns.create({
      runId: `run_${randomBytes(8).toString('hex')}`,
      actionChainId: 'chain_x',
      triggerType: 'api',
      stateJson: JSON.stringify({ input: { n: 1 } }),
      messageId: 'msg_x',
      startedByUserId: org.admin.userId,
      status: 'pending',
    });
  /** A time after `t` (the clock's resolution is a millisecond): a write stamped after it has moved on. */
  const tickPast = async (t: Date) => {
    while (Date.now() <= t.getTime()) await new Promise((r) => setImmediate(r));
    return new Date();
  };
  const result = (stepId: string, generation = 1): StepResult => ({
    stepId,
    stepOrder: 1,
    name: 'one',
    outcome: 'success',
    detail: null,
    modelCalls: 1,
    generation,
    finishedAt: new Date(),
  });

  it('recordStep stores the result and state, moves stateVersion and updatedAt, only at the version read', async () => {
    const run = await newRun();
    const state = JSON.stringify({ input: { n: 1 }, a: 'A' });
    const recorded = result('step_1');
    const later = await tickPast(run.updatedAt);
    expect(await tenant().chainRuns.recordStep(run._id, 1, recorded, state, 0)).to.equal(true);
    const written = (await tenant().chainRuns.get(run._id))!;
    expect(written.stateJson).to.equal(state);
    expect(written.stateVersion).to.equal(1);
    expect(written.updatedAt.getTime()).to.be.at.least(later.getTime());
    // Stored as the schema orders and types a step result.
    expect(Object.entries(written.stepResults.step_1!)).to.deep.equal(Object.entries(recorded));
    // The list (mongoose) reads the same run, its step results as the schema types them.
    const listed = await tenant().chainRuns.list('chain_x', {
      limit: 10,
      offset: 0,
      orderBy: 'updated_at',
      descending: true,
    });
    expect(listed.items.map((r) => r._id)).to.deep.equal([run._id]);
    // A copy at the old version, another execution, another organization: nothing is written.
    expect(await tenant().chainRuns.recordStep(run._id, 1, result('step_2'), '{}', 0)).to.equal(false);
    expect(await tenant().chainRuns.recordStep(run._id, 2, result('step_2', 2), '{}')).to.equal(false);
    expect(await tenant(other).chainRuns.recordStep(run._id, 1, result('step_2'), '{}')).to.equal(false);
    const unchanged = (await tenant().chainRuns.get(run._id))!;
    expect(unchanged.stateJson).to.equal(state);
    expect(unchanged.stateVersion).to.equal(1);
    expect(Object.keys(unchanged.stepResults)).to.deep.equal(['step_1']);
  });

  it('markRunning and finish change only their own execution of their own organization’s run', async () => {
    const run = await newRun();
    await tickPast(run.updatedAt);
    expect(await tenant(other).chainRuns.markRunning(run._id, 1)).to.equal(null);
    expect(await tenant().chainRuns.markRunning(run._id, 2)).to.equal(null);
    const running = (await tenant().chainRuns.markRunning(run._id, 1))!;
    expect(running).to.include({ _id: run._id, status: 'running' });
    expect(running.startedAt).to.be.instanceOf(Date);
    expect(running.updatedAt).to.deep.equal(running.startedAt);
    // Marking it again (a retried first step) keeps when it started.
    await tickPast(running.updatedAt);
    const again = (await tenant().chainRuns.markRunning(run._id, 1))!;
    expect(again).to.include({ status: 'running' });
    expect(again.startedAt).to.deep.equal(running.startedAt);
    expect(await tenant(other).chainRuns.finish(run._id, 1, 'success', null)).to.equal(null);
    const done = (await tenant().chainRuns.finish(run._id, 1, 'failed', 'step 1 failed: no'))!;
    expect(done).to.include({ status: 'failed', statusMessage: 'step 1 failed: no' });
    expect(done.finishedAt).to.be.instanceOf(Date);
    expect(done.updatedAt).to.deep.equal(done.finishedAt);
    expect((await tenant().chainRuns.get(run._id))!.status).to.equal('failed');
  });

  it('a run whose start was refused is never run by a start that arrives late; one its execution ended is', async () => {
    const refused = await newRun();
    // Only the current execution of this organization's run, and only while it has not ended.
    await tenant(other).chainRuns.failUnstarted(refused._id, 1, 'the run could not be started; run it again');
    await tenant().chainRuns.failUnstarted(refused._id, 2, 'the run could not be started; run it again');
    expect((await tenant().chainRuns.get(refused._id))!.status).to.equal('pending');
    await tenant().chainRuns.failUnstarted(refused._id, 1, 'the run could not be started; run it again');
    const failed = (await tenant().chainRuns.get(refused._id))!;
    expect(failed).to.include({
      status: 'failed',
      statusMessage: 'the run could not be started; run it again',
    });
    expect(failed.startedAt ?? null).to.equal(null);
    expect(failed.finishedAt).to.be.instanceOf(Date);
    // The start the API gave up on reaches Temporal after all: its execution finds nothing to run.
    expect(await tenant().chainRuns.markRunning(refused._id, 1)).to.equal(null);
    expect((await tenant().chainRuns.get(refused._id))!.status).to.equal('failed');
    // A run its own execution started and ended: a retried last step still reads it, and nothing refails it.
    const ended = await newRun();
    await tenant().chainRuns.markRunning(ended._id, 1);
    await tenant().chainRuns.finish(ended._id, 1, 'success', null);
    await tenant().chainRuns.failUnstarted(ended._id, 1, 'the run could not be started; run it again');
    expect(await tenant().chainRuns.markRunning(ended._id, 1)).to.include({ status: 'success' });
  });

  it('a debit takes the credits from its organization only, and records when', async () => {
    const start = env.config.credits.startingBalance;
    const credits = env.deps.services.credits;
    await credits.balance(other.organizationId);
    expect(await credits.debit(org.organizationId, 3)).to.equal(start - 3);
    const opened = (await tenant().creditAccount.get())!;
    const later = await tickPast(opened.updatedAt);
    expect(await credits.debit(org.organizationId, 2)).to.equal(start - 5);
    const account = (await tenant().creditAccount.get())!;
    expect(account).to.include({ balance: start - 5, spent: 5, granted: start });
    expect(account.updatedAt.getTime()).to.be.at.least(later.getTime());
    expect(await credits.balance(other.organizationId)).to.equal(start);
  });

  it('a usage record is stored as created, with its defaults and createdAt, in its organization', async () => {
    const created = await tenant().llmUsage.create({
      purpose: 'chain-step',
      model: 'm',
      promptTokens: 10,
      completionTokens: 2,
      usageReported: true,
      cost: 1,
      balanceAfter: 99,
    });
    expect(created.createdAt).to.be.instanceOf(Date);
    expect(created).to.include({ userId: null, reference: null, organizationId: org.organizationId });
    expect(await tenant().llmUsage.recent(5)).to.deep.equal([created]);
    expect(await tenant(other).llmUsage.recent(5)).to.deep.equal([]);
  });
});
