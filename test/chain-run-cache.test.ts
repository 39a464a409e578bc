import { expect } from 'chai';
import { workflowIds } from '@contracts';
import { chainRunModel } from '@lib/chains/chain-run.schema';
import { closeTestEnv, testEnv, type TestEnv } from './helpers/env';
import { createRunnableChain, finished, startRun, userText } from './helpers/chains';
import { createTestOrg, type TestOrg } from './helpers/org';
import { startTestWorker } from './helpers/worker';

const obj = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
});
const str = { type: 'string' };

/**
 * A worker keeps an execution's state between its steps (activities/chains/execution-cache.ts). These tests
 * write the run behind its back, as another worker or a re-run would, while a step waits for its model.
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

  const runs = () => env.deps.db.model(chainRunModel);
  const threeSteps = () =>
    createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'two', instructions: 'two {{a}} {{other}}', outputSchema: obj({ b: str }) },
      { stepOrder: 3, name: 'three', instructions: 'three {{b}}', outputSchema: obj({ c: str }) },
    ]);

  it('runs a step again on the current state when another writer changed it meanwhile', async () => {
    const chain = await threeSteps();
    let runId!: Promise<string>;
    let wrote = false;
    chain.answer(async (body) => {
      const text = userText(body);
      if (text.startsWith('one')) return { content: '{"a":"A"}' };
      if (text.startsWith('two')) {
        if (!wrote) {
          wrote = true;
          // Another worker's write of the state, after this step read it.
          const id = await runId;
          const run = await runs().findById(id).lean();
          const state = { ...(JSON.parse(run!.stateJson) as object), other: 'O' };
          await runs().updateOne(
            { _id: id },
            { $set: { stateJson: JSON.stringify(state) }, $inc: { stateVersion: 1 } },
          );
        }
        return { content: JSON.stringify({ b: `B(${text})` }) };
      }
      return { content: '{"c":"C"}' };
    });
    runId = startRun(env, org, chain.chainId, { payload: {} }).then((r) => r.runId);
    const done = await finished(env, org, chain.chainId, await runId);
    expect(done.status).to.equal('success');
    // The other write is kept, and the step's answer is the one asked over the state that has it.
    expect(done.state).to.deep.include({ a: 'A', other: 'O', b: 'B(two A O)', c: 'C' });
    const asked = chain.calls().map((b) => userText(b));
    expect(asked).to.deep.equal(['one', 'two A ', 'two A O', 'three B(two A O)']);
  });

  it('stops an execution whose run was re-run while a step asked the model, writing nothing', async () => {
    const chain = await threeSteps();
    let runId!: Promise<string>;
    chain.answer(async (body) => {
      const text = userText(body);
      if (text.startsWith('two')) {
        // What a re-run does to the run: the next generation owns it.
        await runs().updateOne({ _id: await runId }, { $inc: { generation: 1 } });
        return { content: '{"b":"B"}' };
      }
      return { content: '{"a":"A"}' };
    });
    runId = startRun(env, org, chain.chainId, { payload: {} }).then((r) => r.runId);
    const id = await runId;
    const handle = env.deps.temporal.client.workflow.getHandle(
      workflowIds.chainRun(org.organizationId, id, 1),
    );
    const result = (await handle.result()) as { status: string; statusMessage: string };
    expect(result).to.deep.equal({ status: 'failed', statusMessage: 'the run was re-run or deleted' });
    const run = await runs().findById(id).lean();
    expect(JSON.parse(run!.stateJson)).to.deep.equal({ input: {}, a: 'A' });
    expect(chain.calls().map((b) => userText(b))).to.deep.equal(['one', 'two A ']);
  });
});
