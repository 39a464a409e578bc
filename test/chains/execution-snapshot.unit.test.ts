import { expect } from 'chai';
import { RunSuperseded } from '@lib/chains/engine/errors';
import { readExecution, snapshotOf } from '@lib/chains/engine/execution-snapshot';
import type { ChainStore } from './engine-world';
import { engineWorld, ORG, step, stepInput } from './engine-world';

async function readError(run: () => Promise<unknown>) {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(err).to.be.instanceOf(RunSuperseded);
  return err!.message;
}

// docs/chains.md "Between steps": what a step reads of its execution, in one round; a run re-run or deleted stops it.
describe("an execution's snapshot (in memory)", () => {
  it('reads the run, the chain, its steps and their attachments, grouped by step', async () => {
    const world = engineWorld([step(1), step(2)], { state: { input: { a: 1 } } });
    const tenant = world.deps.repos.tenant(ORG) as unknown as ChainStore;
    const attachment = (stepId: string, targetId: string) => ({ stepId, targetId, kind: 'tool' });
    tenant.chainAttachments.listForChain = () =>
      Promise.resolve([attachment('stp_1', 'a'), attachment('stp_2', 'b'), attachment('stp_1', 'c')]);
    world.runs.runs.get('run_1')!.stateVersion = 7;
    const snapshot = await readExecution(
      world.deps.repos.tenant(ORG),
      stepInput(1, { actionChainId: undefined }),
    );
    expect(snapshot).to.deep.include({
      runRef: { actionChainId: 'chn_1', runId: 'run_1', startedByUserId: 'usr_1' },
      state: { input: { a: 1 } },
      stepResults: {},
      version: 7,
      // {"input":{"a":1}}
      stateChars: 17,
      balance: undefined,
    });
    expect([...snapshot.steps.keys()]).to.deep.equal(['stp_1', 'stp_2']);
    expect(snapshot.attachments.get('stp_1')!.map((a) => a.targetId)).to.deep.equal(['a', 'c']);
    expect(snapshot.attachments.get('stp_2')!.map((a) => a.targetId)).to.deep.equal(['b']);
    expect(snapshot.chain).to.include({ _id: 'chn_1' });
  });

  it("reads the chain of an input naming the run's chain once, alongside the run", async () => {
    const world = engineWorld([step(1)]);
    const tenant = world.deps.repos.tenant(ORG) as unknown as ChainStore;
    let definitionReads = 0;
    tenant.chainAttachments.listForChain = () => {
      definitionReads++;
      return Promise.resolve([]);
    };
    const snapshot = await readExecution(world.deps.repos.tenant(ORG), stepInput(1));
    expect([...snapshot.steps.keys()]).to.deep.equal(['stp_1']);
    expect(definitionReads).to.equal(1);
  });

  it('marks the run running as the first step reads it, and only then', async () => {
    const world = engineWorld([step(1)]);
    await readExecution(world.deps.repos.tenant(ORG), stepInput(1));
    expect(world.runs.runs.get('run_1')!.status).to.equal('pending');
    await readExecution(world.deps.repos.tenant(ORG), stepInput(1, { marksRunning: true }));
    expect(world.runs.runs.get('run_1')!.status).to.equal('running');
  });

  it('stops an execution whose run was deleted, re-run, or whose chain was deleted', async () => {
    const world = engineWorld([step(1)]);
    const tenant = world.deps.repos.tenant(ORG);
    world.runs.runs.get('run_1')!.generation = 2;
    expect(await readError(() => readExecution(tenant, stepInput(1)))).to.equal('the run was re-run');
    expect(await readError(() => readExecution(tenant, stepInput(1, { marksRunning: true })))).to.equal(
      'the run was re-run or deleted',
    );
    world.runs.runs.get('run_1')!.actionChainId = 'chn_gone';
    expect(await readError(() => readExecution(tenant, stepInput(1, { generation: 2 })))).to.equal(
      'the chain was deleted',
    );
    world.runs.runs.delete('run_1');
    expect(await readError(() => readExecution(tenant, stepInput(1)))).to.equal('the run was deleted');
  });

  it("copies the run's step results, so advancing a copy leaves the run read untouched", () => {
    const run = {
      _id: 'run_1',
      actionChainId: 'chn_1',
      startedByUserId: 'u',
      stateJson: '{}',
      stepResults: { s: { outcome: 'success', generation: 1 } },
    } as unknown as Parameters<typeof snapshotOf>[0];
    const snapshot = snapshotOf(run, {} as Parameters<typeof snapshotOf>[1], [], [], 5);
    expect(snapshot).to.deep.include({ version: 0, balance: 5, stateChars: 2 });
    expect(snapshot.stepResults).to.not.equal(run.stepResults);
  });
});
