import { expect } from 'chai';
import type { UnwrittenStep } from '@contracts';
import { RunSuperseded, StaleSnapshot } from '@lib/chains/engine/errors';
import { MAX_CACHED_STATE_CHARS } from '@lib/chains/engine/execution-cache';
import { WriteBehindRunStore } from '@lib/chains/engine/write-behind-run-store';
import { engineWorld, ORG, step, stepInput } from './engine-world';

const success = (stepId: string, version = 0): UnwrittenStep => ({
  stepId,
  stepOrder: Number(stepId.slice(4)),
  name: stepId,
  modelCalls: 1,
  finishedAt: '2026-01-02T03:04:05.000Z',
  fields: { [stepId]: 'done' },
  version,
});

function behindWorld() {
  const world = engineWorld([step(1), step(2), step(3)]);
  const store = new WriteBehindRunStore({ repos: world.deps.repos, logger: world.deps.logger });
  return { world, store, run: world.runs.runs.get('run_1')! };
}

const newState = (json: string) => ({ value: JSON.parse(json) as Record<string, unknown>, json });

// docs/chains.md "Between steps" and "Handing a result on": the worker's copy of the execution, advanced by each
// result it writes or takes as written; a copy found stale is dropped.
describe('the write-behind run store (in memory)', () => {
  it('holds the execution it read, and advances its copy by each result written', async () => {
    const { store } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    expect(store.held(stepInput(1))).to.equal(snapshot);
    const result = {
      stepId: 'stp_1',
      stepOrder: 1,
      name: 's1',
      outcome: 'skipped' as const,
      detail: null,
      modelCalls: 0,
      generation: 1,
      finishedAt: new Date(),
    };
    await store.record(stepInput(1), snapshot, result, newState('{"a":1}'));
    expect(store.held(stepInput(1))).to.deep.include({
      version: 1,
      state: { a: 1 },
      stateChars: 7,
      stepResults: { stp_1: { outcome: 'skipped', generation: 1 } },
    });
  });

  it('drops its copy when a write finds the state moved on', async () => {
    const { store, run } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    run.stateVersion = 4;
    const result = {
      stepId: 'stp_1',
      stepOrder: 1,
      name: 's1',
      outcome: 'success' as const,
      detail: null,
      modelCalls: 0,
      generation: 1,
      finishedAt: new Date(),
    };
    expect(await store.record(stepInput(1), snapshot, result).catch((e: unknown) => e)).to.be.instanceOf(
      StaleSnapshot,
    );
    expect(store.held(stepInput(1))).to.equal(undefined);
  });

  it('takes a handed-on success as written at once, and knows its own write of it', async () => {
    const { store, run } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    expect(store.handOn(stepInput(1), snapshot, success('stp_1'), newState('{"stp_1":"done"}'))).to.equal(
      true,
    );
    expect(store.held(stepInput(2))).to.deep.include({ version: 1, state: { stp_1: 'done' } });
    // Its own write counts even once the run moved to another execution: it was written while it was ours.
    expect(await store.writePrevious({ ...stepInput(2), previous: success('stp_1') })).to.equal('written');
    expect(run.stepResults.stp_1).to.deep.include({ outcome: 'success', modelCalls: 1 });
    run.generation = 2;
    expect(await store.writePrevious({ ...stepInput(2), previous: success('stp_1') })).to.equal('written');
  });

  it('writes from the history a success it did not write itself, dropping its copy', async () => {
    const { store, run } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    store.handOn(stepInput(1), snapshot, success('stp_1'), newState('{"stp_1":"done"}'));
    await store.writePrevious({ ...stepInput(2), previous: success('stp_1') });
    // Step 2 was handed on by another worker: its write is this worker's to make.
    expect(await store.writePrevious({ ...stepInput(3), previous: success('stp_2', 1) })).to.equal('written');
    // (The state step 1 handed on was {"stp_1":"done"}.)
    expect(JSON.parse(run.stateJson)).to.deep.equal({
      stp_1: 'done',
      stp_2: 'done',
    });
    expect(store.held(stepInput(3))).to.equal(undefined);
  });

  it('logs a lost write, drops its copy, and lets the next activity write it from the history', async () => {
    const { store, run, world } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    const record = world.runs.recordStep.bind(world.runs);
    const reset = new Error('connection reset');
    world.runs.recordStep = () => Promise.reject(reset);
    store.handOn(stepInput(1), snapshot, success('stp_1'), newState('{"stp_1":"done"}'));
    world.runs.recordStep = record;
    expect(await store.writePrevious({ ...stepInput(2), previous: success('stp_1') })).to.equal('written');
    expect(world.logged).to.deep.equal([
      {
        level: 'warn',
        msg: "a chain step's result was not written; the execution's next activity writes it",
      },
    ]);
    expect(world.logFields).to.deep.equal([
      { err: reset, organizationId: ORG, runId: 'run_1', stepId: 'stp_1' },
    ]);
    expect(store.held(stepInput(2))).to.equal(undefined);
    expect(JSON.parse(run.stateJson)).to.deep.equal({ input: { message: 'hi' }, stp_1: 'done' });
  });

  it('drops its copy when its own write of a handed-on success is refused', async () => {
    const { store, run } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    run.stateVersion = 2;
    store.handOn(stepInput(1), snapshot, success('stp_1'), newState('{"stp_1":"done"}'));
    // Once the refused write is done (its callbacks ran), and before the next activity asks.
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.held(stepInput(2))).to.equal(undefined);
    expect(await store.writePrevious({ ...stepInput(2), previous: success('stp_1') })).to.equal('stale');
    expect(store.held(stepInput(2))).to.equal(undefined);
  });

  it('keeps no copy of a state longer than 256 KB of JSON', async () => {
    const { store } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    const json = JSON.stringify({ a: 'x'.repeat(MAX_CACHED_STATE_CHARS) });
    store.handOn(stepInput(1), snapshot, success('stp_1'), newState(json));
    expect(store.held(stepInput(1))).to.equal(undefined);
  });

  it('keeps the copy of a state of exactly 256 KB of JSON', async () => {
    const { store } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    const json = JSON.stringify({ a: 'x'.repeat(256 * 1024 - '{"a":""}'.length) });
    expect(json).to.have.length(256 * 1024);
    store.handOn(stepInput(1), snapshot, success('stp_1'), newState(json));
    expect(store.held(stepInput(1))).to.equal(snapshot);
  });

  it('takes a handed-on step as succeeded in its copy', async () => {
    const { store } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    store.handOn(stepInput(1), snapshot, success('stp_1'), newState('{"stp_1":"done"}'));
    expect(store.held(stepInput(2))).to.deep.include({
      version: 1,
      stepResults: { stp_1: { outcome: 'success', generation: 1 } },
    });
  });

  it('stops an execution whose run was deleted before its result was written', async () => {
    const { store, world } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    world.runs.runs.delete('run_1');
    const result = {
      stepId: 'stp_1',
      stepOrder: 1,
      name: 's1',
      outcome: 'success' as const,
      detail: null,
      modelCalls: 1,
      generation: 1,
      finishedAt: new Date(),
    };
    const err = await store
      .record(stepInput(1), snapshot, result, newState('{"a":1}'))
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RunSuperseded);
    expect((err as Error).message).to.equal('the run was re-run or deleted');
  });

  it('forgets an ended execution: its copy and its pending writes', async () => {
    const { store, run } = behindWorld();
    const snapshot = await store.read(stepInput(1));
    store.handOn(stepInput(1), snapshot, success('stp_1'), newState('{"stp_1":"done"}'));
    await store.writePrevious({ ...stepInput(2), previous: success('stp_1') });
    store.forget(stepInput(1));
    expect(store.held(stepInput(1))).to.equal(undefined);
    run.generation = 2;
    expect(await store.writePrevious({ ...stepInput(2), previous: success('stp_1') })).to.equal('superseded');
  });
});
