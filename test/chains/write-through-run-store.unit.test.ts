import { expect } from 'chai';
import type { UnwrittenStep } from '@contracts';
import { RunSuperseded, StaleSnapshot } from '@lib/chains/engine/errors';
import type { RunStore } from '@lib/chains/engine/run-store';
import { WriteThroughRunStore } from '@lib/chains/engine/write-through-run-store';
import { engineWorld, step, stepInput } from './engine-world';

const result = (stepId = 'stp_1') => ({
  stepId,
  stepOrder: 1,
  name: 's1',
  outcome: 'success' as const,
  detail: null,
  modelCalls: 1,
  generation: 1,
  finishedAt: new Date('2026-01-01T00:00:00Z'),
});

const previous: UnwrittenStep = {
  stepId: 'stp_1',
  stepOrder: 1,
  name: 's1',
  modelCalls: 2,
  finishedAt: '2026-01-02T03:04:05.000Z',
  fields: { step1: 'one' },
  version: 0,
};

function throughWorld() {
  const world = engineWorld([step(1), step(2)]);
  return { world, run: world.runs.runs.get('run_1')!, store: new WriteThroughRunStore(world.deps.repos) };
}

// docs/chains.md "Where the code is": WriteThroughRunStore reads the run before every step and writes every result
// before the step returns (it hands nothing on); every write is conditional on the run's stateVersion.
describe('the write-through run store (in memory)', () => {
  it('holds nothing and hands nothing on', async () => {
    const { store } = throughWorld();
    const snapshot = await store.read(stepInput(1));
    (store as RunStore).hold(stepInput(1), snapshot);
    expect(store.held()).to.equal(undefined);
    expect(store.handOn()).to.equal(false);
  });

  it('writes a result and its state at the version read', async () => {
    const { store, run } = throughWorld();
    const snapshot = await store.read(stepInput(1));
    await store.record(stepInput(1), snapshot, result(), { value: {}, json: '{"x":1}' });
    expect(run).to.deep.include({ stateJson: '{"x":1}', stateVersion: 1 });
    expect(run.stepResults.stp_1).to.deep.equal(result());
  });

  it('refuses a write over a state that moved on (StaleSnapshot) or a run re-run (RunSuperseded)', async () => {
    const { store, run } = throughWorld();
    const snapshot = await store.read(stepInput(1));
    run.stateVersion = 1;
    expect(await store.record(stepInput(1), snapshot, result()).catch((e: unknown) => e)).to.be.instanceOf(
      StaleSnapshot,
    );
    run.generation = 2;
    const err = await store.record(stepInput(1), snapshot, result()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RunSuperseded);
    expect((err as Error).message).to.equal('the run was re-run or deleted');
    expect(run.stepResults).to.deep.equal({});
  });

  it('has nothing to write when no success was handed on', async () => {
    const { store, world } = throughWorld();
    expect(await store.writePrevious(stepInput(2))).to.equal('written');
    expect(world.runs.recordCalls).to.have.length(0);
  });

  it('writes a handed-on success from the history over the run as it is', async () => {
    const { store, run } = throughWorld();
    expect(await store.writePrevious({ ...stepInput(2), previous })).to.equal('written');
    expect(JSON.parse(run.stateJson)).to.deep.equal({ input: { message: 'hi' }, step1: 'one' });
    expect(run.stepResults.stp_1).to.deep.equal({
      stepId: 'stp_1',
      stepOrder: 1,
      name: 's1',
      outcome: 'success',
      detail: null,
      modelCalls: 2,
      generation: 1,
      finishedAt: new Date('2026-01-02T03:04:05.000Z'),
    });
  });

  it('does not write again a success this execution already wrote', async () => {
    const { store, run, world } = throughWorld();
    run.stepResults.stp_1 = result();
    run.stateVersion = 5;
    expect(await store.writePrevious({ ...stepInput(2), previous })).to.equal('written');
    expect(world.runs.recordCalls).to.have.length(0);
  });

  it('writes again a success an earlier execution wrote', async () => {
    const { store, run } = throughWorld();
    run.generation = 2;
    run.stepResults.stp_1 = result();
    expect(await store.writePrevious({ ...stepInput(2, { generation: 2 }), previous })).to.equal('written');
    expect(run.stepResults.stp_1.generation).to.equal(2);
  });

  it("says stale when the state moved on after the step read it, superseded when the run is another execution's", async () => {
    const { store, run, world } = throughWorld();
    run.stateVersion = 1;
    expect(await store.writePrevious({ ...stepInput(2), previous })).to.equal('stale');
    run.generation = 2;
    expect(await store.writePrevious({ ...stepInput(2), previous })).to.equal('superseded');
    world.runs.runs.delete('run_1');
    expect(await store.writePrevious({ ...stepInput(2), previous })).to.equal('superseded');
  });

  it('reads again when another writer wrote between its read and its write', async () => {
    const { store, run, world } = throughWorld();
    world.runs.beforeRecord = () => void (run.stateVersion = 1 + (run.stateVersion ?? 0));
    expect(
      await store.writePrevious({ ...stepInput(2), previous }).catch((e: unknown) => e),
    ).to.be.instanceOf(StaleSnapshot);
  });

  it('reads a run written before stateVersion existed as version 0', async () => {
    const { store, run } = throughWorld();
    delete (run as { stateVersion?: number }).stateVersion;
    expect((await store.read(stepInput(1))).version).to.equal(0);
  });
});
