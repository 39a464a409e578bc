import { expect } from 'chai';
import { workflowIds } from '@contracts';
import { closeTestEnv, testEnv, type TestEnv } from '@test/helpers/env';
import { createRunnableChain, finished, obj, startRun, str, userText } from '@test/helpers/chains';
import { createTestOrg, type TestOrg } from '@test/helpers/org';
import { startTestWorker } from '@test/helpers/worker';

/**
 * A worker keeps an execution's state between its steps (lib/chains/engine/write-behind-run-store.ts). These
 * tests write the run behind its back, as another worker or a re-run would, while a step waits for its model.
 */
describe('action chain runs: the worker’s copy of an execution', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let org: TestOrg;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  before(async () => {
    env = await testEnv();
    worker = await startTestWorker(env);
  });
  after(async () => {
    await worker.stop();
    await closeTestEnv();
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Chain Cache Org');
  });

  const runs = () => env.deps.repos.tenant(org.organizationId).chainRuns;
  const threeSteps = () =>
    createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'two', instructions: 'two {{a}} {{other}}', outputSchema: obj({ b: str }) },
      { stepOrder: 3, name: 'three', instructions: 'three {{b}}', outputSchema: obj({ c: str }) },
    ]);

  it('runs a step again on the current state when another writer changed it meanwhile', async () => {
    const chain = await threeSteps();
    const started = { runId: Promise.resolve('') };
    let wrote = false;
    chain.answer(async (body) => {
      const text = userText(body);
      if (text.startsWith('one')) return { content: '{"a":"A"}' };
      if (text.startsWith('two')) {
        if (!wrote) {
          wrote = true;
          // Another worker's write of the state (recordStep moves stateVersion on), after this step read it.
          const id = await started.runId;
          const run = await runs().get(id);
          const state = { ...(JSON.parse(run!.stateJson) as object), other: 'O' };
          const other = { ...run!.stepResults[chain.stepIds[0]!]!, detail: 'written elsewhere' };
          expect(await runs().recordStep(id, 1, other, JSON.stringify(state))).to.equal(true);
        }
        return { content: JSON.stringify({ b: `B(${text})` }) };
      }
      return { content: '{"c":"C"}' };
    });
    started.runId = startRun(env, org, chain.chainId, { payload: {} }).then((r) => r.runId);
    const done = await finished(env, org, chain.chainId, await started.runId);
    expect(done.status).to.equal('success');
    // The other write is kept, and the step's answer is the one asked over the state that has it.
    expect(done.state).to.deep.include({ a: 'A', other: 'O', b: 'B(two A O)', c: 'C' });
    const asked = chain.calls().map((b) => userText(b));
    expect(asked).to.deep.equal(['one', 'two A ', 'two A O', 'three B(two A O)']);
  });

  it('stops an execution whose run was re-run while a step asked the model, writing nothing', async () => {
    const chain = await threeSteps();
    const started = { runId: Promise.resolve('') };
    chain.answer(async (body) => {
      const text = userText(body);
      if (text.startsWith('two')) {
        // What a re-run does to the run: the next generation owns it.
        const id = await started.runId;
        await runs().finish(id, 1, 'failed', 'interrupted');
        await runs().rerun(id, { status: 'running', messageId: 'msg_rerun', startedByUserId: 'user_x' });
        return { content: '{"b":"B"}' };
      }
      return { content: '{"a":"A"}' };
    });
    started.runId = startRun(env, org, chain.chainId, { payload: {} }).then((r) => r.runId);
    const id = await started.runId;
    const handle = env.deps.temporal.client.workflow.getHandle(
      workflowIds.chainRun(org.organizationId, id, 1),
    );
    const result = (await handle.result()) as { status: string; statusMessage: string };
    expect(result).to.deep.equal({ status: 'failed', statusMessage: 'the run was re-run or deleted' });
    const run = await runs().get(id);
    expect(run!.generation).to.equal(2);
    expect(JSON.parse(run!.stateJson)).to.deep.equal({ input: {}, a: 'A' });
    expect(Object.keys(run!.stepResults)).to.deep.equal([chain.stepIds[0]]);
    expect(chain.calls().map((b) => userText(b))).to.deep.equal(['one', 'two A ']);
  });
});
