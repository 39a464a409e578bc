import { expect } from 'chai';
import { WORKFLOWS, workflowIds } from '@contracts';
import { recordHistory } from '@test/helpers/histories';
import type { TestEnv } from '@test/helpers/env';
import {
  createRunnableChain,
  finished,
  getRun,
  obj,
  runToEnd,
  startRun,
  str,
  userText,
} from '@test/helpers/chains';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { eventually } from '@test/helpers/wait';
import { useChainRunSuite } from '@test/chains/chain-run-suite';

describe('action chain runs', function () {
  this.timeout(120_000);
  const suite = useChainRunSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  async function stepIdOf(chainId: string, stepOrder: number) {
    const steps = await env.deps.repos.tenant(org.organizationId).chains.listSteps(chainId);
    return steps.find((s) => s.stepOrder === stepOrder)!._id;
  }

  it('re-runs a failed run from the failed step: steps that succeeded are not asked again', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'two', instructions: 'two {{a}}', outputSchema: obj({ b: str }) },
      { stepOrder: 3, name: 'three', instructions: 'three {{b}}', outputSchema: obj({ c: str }) },
    ]);
    let healthy = false;
    chain.answer((body) => {
      const text = userText(body);
      if (text.startsWith('one')) return { content: '{"a":"A"}' };
      if (text.startsWith('two')) return healthy ? { content: '{"b":"B"}' } : { content: '{}' };
      return { content: '{"c":"C"}' };
    });
    const failed = await runToEnd(env, org, chain.chainId);
    expect(failed.status).to.equal('failed');
    expect(failed.statusMessage).to.contain('step 2 (two) failed');
    // the step's own instructions are the first user message (a retry adds more)
    const asked = (prefix: string) =>
      chain.calls().filter((b) => (b.messages[1]?.content as string).startsWith(prefix)).length;
    expect([asked('one'), asked('two'), asked('three')]).to.deep.equal([1, 3, 0]);

    healthy = true;
    const again = await startRun(env, org, chain.chainId, { runId: failed.runId });
    expect(again.runId).to.equal(failed.runId);
    const done = await finished(env, org, chain.chainId, failed.runId);
    expect(done.status).to.equal('success');
    expect(done.generation).to.equal(2);
    expect(done.state).to.deep.include({ a: 'A', b: 'B', c: 'C' });
    expect([asked('one'), asked('two'), asked('three')]).to.deep.equal([1, 4, 1]);
    expect(done.steps.map((s) => [s.stepOrder, s.outcome])).to.deep.equal([
      [1, 'success'],
      [2, 'success'],
      [3, 'success'],
    ]);

    // onlyStep runs one step against the run's state, even one that succeeded
    await startRun(env, org, chain.chainId, { runId: failed.runId, onlyStep: 3 });
    const only = await finished(env, org, chain.chainId, failed.runId);
    expect(only.generation).to.equal(3);
    expect([asked('one'), asked('two'), asked('three')]).to.deep.equal([1, 4, 2]);
    expect(userText(chain.calls().at(-1)!)).to.equal('three B');
    await as(env, org.chat.token)
      .post(org.path(`/chains/${chain.chainId}/run`), { runId: failed.runId, onlyStep: 9 })
      .expect(invalidReference('onlyStep'));
    await as(env, org.chat.token)
      .post(org.path(`/chains/${chain.chainId}/run`), { runId: failed.runId, payload: { x: 1 } })
      .expect(400);
    await as(env, org.chat.token)
      .post(org.path(`/chains/${chain.chainId}/run`), { runId: 'run_missing' })
      .expect(invalidReference('runId'));
  });

  it('runs an execution started before its input named the chain, recording the failed step', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'two', instructions: 'two {{a}}', outputSchema: obj({ b: str }) },
    ]);
    chain.answer((body) => (userText(body).startsWith('one') ? { content: '{"a":"A"}' } : { content: '{}' }));
    const { input } = await env.deps.services.chainRuns.createRun(org.organizationId, {
      actionChainId: chain.chainId,
      payload: {},
      triggerType: 'api',
      startedByUserId: org.chat.userId,
    });
    expect(input.actionChainId).to.equal(chain.chainId);
    // The input as executions started before `actionChainId` (and plans) were added carry it.
    const older = { ...input, actionChainId: undefined, plan: undefined };
    await env.deps.temporal.client.workflow.execute(WORKFLOWS.chainRun, {
      taskQueue: env.config.temporal.taskQueue,
      workflowId: workflowIds.chainRun(org.organizationId, input.runId, input.generation),
      args: [older],
    });
    const run = await getRun(env, org, chain.chainId, input.runId);
    expect(run.status).to.equal('failed');
    expect(run.state).to.deep.equal({ input: {}, a: 'A' });
    expect(run.steps.map((s) => [s.stepOrder, s.outcome])).to.deep.equal([
      [1, 'success'],
      [2, 'failed'],
    ]);
  });

  it('marks a run running as its first step starts and ends it after its last, planned or not', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'two', instructions: 'two {{a}}', outputSchema: obj({ b: str }) },
      { stepOrder: 3, name: 'off', instructions: 'never', enabled: false },
    ]);
    const client = env.deps.temporal.client;
    for (const planned of [true, false]) {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const off = chain.answer(async (body) => {
        const first = userText(body).startsWith('one');
        if (first) await gate;
        return { content: first ? '{"a":"A"}' : '{"b":"B"}' };
      });
      const { input } = await env.deps.services.chainRuns.createRun(org.organizationId, {
        actionChainId: chain.chainId,
        payload: {},
        triggerType: 'api',
        startedByUserId: org.chat.userId,
      });
      // Planned when the run is created: the enabled steps, in order.
      expect(input.plan?.steps.map((s) => [s.stepOrder, s.name])).to.deep.equal([
        [1, 'one'],
        [2, 'two'],
      ]);
      expect((await getRun(env, org, chain.chainId, input.runId)).status).to.equal('pending');
      const workflowId = workflowIds.chainRun(org.organizationId, input.runId, input.generation);
      const handle = await client.workflow.start(WORKFLOWS.chainRun, {
        taskQueue: env.config.temporal.taskQueue,
        workflowId,
        // An execution started before plans were made has none.
        args: [planned ? input : { ...input, plan: undefined }],
      });
      // Running while its first step waits for the model.
      await eventually(async () => (await getRun(env, org, chain.chainId, input.runId)).status === 'running');
      release();
      expect(await handle.result()).to.deep.equal({ status: 'success', statusMessage: null });
      const run = await getRun(env, org, chain.chainId, input.runId);
      expect([run.status, run.statusMessage]).to.deep.equal(['success', null]);
      expect(run.state).to.deep.equal({ input: {}, a: 'A', b: 'B' });
      expect(run.startedAt).to.be.a('string');
      expect(Date.parse(run.finishedAt!)).to.be.at.least(Date.parse(run.startedAt!));
      // A planned execution that succeeds runs no local activity: its steps begin and end the run.
      const { events } = await handle.fetchHistory();
      const localActivities = events!.filter(
        (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
      );
      expect(localActivities).to.have.length(planned ? 0 : 2);
      if (planned) await recordHistory(env, workflowId, 'chain-run-planned');
      // Since steps hand on their results (the first step's reaches the second step's input as `previous`).
      if (planned) await recordHistory(env, workflowId, 'chain-run-handed-on');
      off();
    }
  });

  it('keeps when a run started through a retried first step, and a re-run shown running at once starts then', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'flaky', outputSchema: obj({ a: str }) },
    ]);
    const calls: number[] = [];
    chain.answer(() => {
      calls.push(Date.now());
      return calls.length === 1
        ? { error: { status: 500, message: 'the model is down for a moment' } }
        : { content: '{"a":"1"}' };
    });
    const run = await runToEnd(env, org, chain.chainId);
    expect(run.status).to.equal('success');
    expect(calls).to.have.length(2);
    // Marked running before the first model call, not again when the step was retried a second later.
    expect(Date.parse(run.startedAt!)).to.be.at.most(calls[0]!);
    await startRun(env, org, chain.chainId, { runId: run.runId, onlyStep: 1 }, '?resetToRunning=true');
    const rerun = await finished(env, org, chain.chainId, run.runId);
    expect(calls).to.have.length(3);
    expect(Date.parse(rerun.startedAt!)).to.be.above(calls[1]!);
    expect(Date.parse(rerun.startedAt!)).to.be.at.most(calls[2]!);
  });

  it('shows a re-run as running at once with resetToRunning, and refuses a re-run while one runs', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'slow', outputSchema: obj({ a: str }) },
    ]);
    const quick = chain.answer({ content: '{"a":"1"}' });
    const first = await runToEnd(env, org, chain.chainId);
    quick();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const off = chain.answer(async () => {
      await gate;
      return { content: '{"a":"2"}' };
    });
    await startRun(env, org, chain.chainId, { runId: first.runId, onlyStep: 1 }, '?resetToRunning=true');
    expect((await getRun(env, org, chain.chainId, first.runId)).status).to.equal('running');
    const busy = await as(env, org.chat.token)
      .post(org.path(`/chains/${chain.chainId}/run`), { runId: first.runId })
      .expect(409);
    expect(busy.body.error.code).to.equal('conflict');
    release();
    const done = await finished(env, org, chain.chainId, first.runId);
    expect(done.state.a).to.equal('2');
    off();
  });

  it('any → running on POST run with resetToRunning=true: a running run is re-run, its execution in flight cancelled', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'slow', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'then', instructions: 'Then', outputSchema: obj({ b: str }) },
    ]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let firstCalls = 0;
    const off = chain.answer(async (body) => {
      if (userText(body).includes('Then')) return { content: '{"b":"done"}' };
      firstCalls++;
      if (firstCalls === 1) await gate; // the execution in flight, held in its first step
      return { content: `{"a":"${firstCalls === 1 ? 'superseded' : 'rerun'}"}` };
    });
    try {
      const { runId } = await startRun(env, org, chain.chainId);
      await eventually(() => firstCalls === 1);
      const before = await getRun(env, org, chain.chainId, runId);
      expect(before.status).to.equal('running');

      await startRun(env, org, chain.chainId, { runId }, '?resetToRunning=true');
      const rerun = await getRun(env, org, chain.chainId, runId);
      expect(rerun.status).to.equal('running');
      expect(rerun.generation).to.equal(before.generation + 1);
      const superseded = env.deps.temporal.client.workflow.getHandle(
        workflowIds.chainRun(org.organizationId, runId, before.generation),
      );
      // Cancelled as asked: Temporal closes it once the workflow sees the request.
      const closed = await eventually(async () => {
        const status = (await superseded.describe()).status.name;
        return status === 'RUNNING' ? undefined : status;
      });
      expect(closed).to.equal('CANCELLED');

      const done = await finished(env, org, chain.chainId, runId);
      expect(done.status).to.equal('success');
      expect(done.generation).to.equal(rerun.generation);
      expect(done.state).to.deep.include({ a: 'rerun', b: 'done' });
      // The cancelled execution is closed: its step 2 never asked the model; only the re-run's did.
      expect(chain.calls().filter((b) => userText(b).includes('Then'))).to.have.length(1);
    } finally {
      release();
      off();
    }
  });

  it('pays for step model calls with credits and fails a run once they are used up', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'paid', instructions: 'one two three', outputSchema: obj({ a: str }) },
    ]);
    chain.answer({ content: '{"a":"x"}' });
    const { credits } = env.deps.services;
    const before = await credits.balance(org.organizationId);
    const run = await runToEnd(env, org, chain.chainId);
    expect(run.status).to.equal('success');
    const summary = await credits.summary(org.organizationId);
    const [usage] = summary.recentUsage;
    expect(usage).to.include({
      purpose: 'chain-step',
      model: 'gpt-4o-mini',
      reference: await stepIdOf(chain.chainId, 1),
    });
    expect(usage!.promptTokens).to.be.greaterThan(0);
    expect(usage!.cost).to.be.greaterThan(0);
    expect(summary.balance).to.equal(before - usage!.cost);

    await credits.grant(org.organizationId, -summary.balance, 'used up');
    const broke = await runToEnd(env, org, chain.chainId);
    expect(broke.status).to.equal('failed');
    expect(broke.statusMessage).to.equal(
      "step 1 (paid) failed: the organization's credits are used up; an operator can grant more",
    );
    expect(chain.calls()).to.have.length(1);
  });

  it('lists runs newest first and never shows them to another organization', async () => {
    const chain = await createRunnableChain(env, org, [{ stepOrder: 1, outputSchema: obj({ a: str }) }]);
    chain.answer({ content: '{"a":"x"}' });
    const one = await runToEnd(env, org, chain.chainId);
    const two = await runToEnd(env, org, chain.chainId);
    const list = await as(env, org.chat.token)
      .get(org.path(`/chains/${chain.chainId}/runs?orderBy=created_at:desc&limit=1`))
      .expect(200);
    expect(list.body).to.include({ totalRows: 2 });
    expect(list.body.items[0].runId).to.equal(two.runId);
    expect(list.body.items[0]).to.include({ triggerType: 'api', startedByUserId: org.chat.userId });
    const other = await createTestOrg(env, 'Other Runs Org');
    const stranger = as(env, other.admin.token);
    await stranger.get(other.path(`/chains/${chain.chainId}/runs/${one.runId}`)).expect(404);
    await stranger.post(other.path(`/chains/${chain.chainId}/run`), { runId: one.runId }).expect(404); // the chain
    await stranger.get(org.path(`/chains/${chain.chainId}/runs`)).expect(401);
  });
});
