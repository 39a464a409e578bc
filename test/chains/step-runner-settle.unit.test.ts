import { expect } from 'chai';
import type { UnwrittenStep } from '@contracts';
import { RunSuperseded, StaleSnapshot, StepFailed } from '@lib/chains/engine/errors';
import { WriteThroughRunStore } from '@lib/chains/engine/write-through-run-store';
import { attempt, engineWorld, ORG, runnerOf, stateOf, step, stepInput, type World } from './engine-world';

/** Another writer moves the run's state on once, just before the engine's next write. */
function anotherWriterOnce(world: World, fields: object) {
  world.runs.beforeRecord = () => {
    world.runs.beforeRecord = undefined;
    const run = world.runs.runs.get('run_1')!;
    run.stateJson = JSON.stringify({ ...JSON.parse(run.stateJson), ...fields });
    run.stateVersion = 1 + (run.stateVersion ?? 0);
  };
}

const handed = (fields: object, version = 0): UnwrittenStep => ({
  stepId: 'stp_1',
  stepOrder: 1,
  name: 's1',
  modelCalls: 1,
  finishedAt: '2026-01-02T03:04:05.000Z',
  fields: fields as Record<string, unknown>,
  version,
});

// "Between steps" of docs/chains.md: every write is conditional on the run's stateVersion; a stale copy is read
// again and the step asked again over the current state (both calls charged).
describe('chain steps over a stale copy, and the end of a run (engine, in memory)', () => {
  it('asks a step again over the current state when its write finds the state moved on, billing both calls', async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'first' }, { content: 'second' }] });
    const runner = runnerOf(world);
    await runner.beginRun({ organizationId: ORG, runId: 'run_1', generation: 1, actionChainId: 'chn_1' });
    anotherWriterOnce(world, { other: 1 });
    const outcome = await runner.runChainStep(stepInput(1), attempt());
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(stateOf(world)).to.deep.equal({ input: { message: 'hi' }, other: 1, step1: 'second' });
    expect(world.model.requests).to.have.length(2);
    await runner.billing.settled(stepInput(1));
    expect(world.credits.usage).to.have.length(2);
  });

  it('asks a step at most twice: a state found moved on over a fresh read is an error', async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'a' }, { content: 'b' }] });
    anotherWriterOnce(world, { other: 1 });
    const err = await runnerOf(world)
      .runChainStep(stepInput(1), attempt(true))
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StaleSnapshot);
    expect(world.model.requests).to.have.length(1);
  });

  it('asks a first attempt at most twice too: the second ask reads the run afresh', async () => {
    const world = engineWorld([step(1), step(2)], {
      replies: [{ content: 'a' }, { content: 'b' }, { content: 'c' }],
    });
    const runner = runnerOf(world);
    await runner.beginRun({ organizationId: ORG, runId: 'run_1', generation: 1, actionChainId: 'chn_1' });
    // Another writer moves the state on before every write of this step.
    world.runs.beforeRecord = () => {
      const run = world.runs.runs.get('run_1')!;
      run.stateVersion = 1 + (run.stateVersion ?? 0);
    };
    const err = await runner.runChainStep(stepInput(1), attempt()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StaleSnapshot);
    expect(world.model.requests).to.have.length(2);
  });

  it('begins a plan-less execution: marks the run running, plans its steps, and keeps the balance read', async () => {
    const world = engineWorld([step(2), step(1), step(3, { enabled: false })], {
      replies: [{ content: 'a' }],
    });
    const runner = runnerOf(world);
    const plan = await runner.beginRun({
      organizationId: ORG,
      runId: 'run_1',
      generation: 1,
      actionChainId: 'chn_1',
    });
    expect(plan).to.deep.equal({
      steps: [
        { stepId: 'stp_1', stepOrder: 1, name: 's1' },
        { stepId: 'stp_2', stepOrder: 2, name: 's2' },
      ],
      fanOut: { batchSize: 250, concurrency: 8 },
    });
    expect(world.runs.runs.get('run_1')!.status).to.equal('running');
    // A positive balance read at the beginning is taken as it is: no credit read before the call.
    await runner.runChainStep(stepInput(1), attempt());
    expect(world.credits.reads).to.equal(0);
  });

  it("plans an older execution (no chain in its input) from the run's chain, holding no copy", async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'a' }] });
    const runner = runnerOf(world);
    const plan = await runner.beginRun({ organizationId: ORG, runId: 'run_1', generation: 1 });
    expect(plan.steps.map((s) => s.stepId)).to.deep.equal(['stp_1', 'stp_2']);
    await runner.runChainStep(stepInput(1), attempt());
    // Without a copy held, the step read the run and the balance itself.
    expect(world.credits.reads).to.equal(1);
  });

  it('refuses to begin an execution the run no longer belongs to', async () => {
    const world = engineWorld([step(1)]);
    const err = await runnerOf(world)
      .beginRun({ organizationId: ORG, runId: 'run_1', generation: 2, actionChainId: 'chn_1' })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RunSuperseded);
    expect((err as Error).message).to.equal('the run was re-run or deleted');
  });

  it('writes a success handed on by another worker from the history before the next step goes on', async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'two' }] });
    const outcome = await runnerOf(world).runChainStep(
      stepInput(2, { previous: handed({ step1: 'one' }) }),
      attempt(),
    );
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(stateOf(world)).to.deep.equal({ input: { message: 'hi' }, step1: 'one', step2: 'two' });
    const first = world.runs.runs.get('run_1')!.stepResults.stp_1;
    expect(first).to.deep.include({
      outcome: 'success',
      modelCalls: 1,
      finishedAt: new Date('2026-01-02T03:04:05.000Z'),
    });
    // Over what step 1 added: the next step's prompt is rendered from the state with it.
    expect(world.model.requests).to.have.length(1);
  });

  it('asks the previous step again when the state moved on after it read it, and names it when that fails', async () => {
    const world = engineWorld([step(1, { failBeforeRunningIf: 'other == 1' }), step(2)]);
    const run = world.runs.runs.get('run_1')!;
    run.stateJson = JSON.stringify({ input: {}, other: 1 });
    run.stateVersion = 1;
    const err = await runnerOf(world)
      .runChainStep(stepInput(2, { previous: handed({ step1: 'one' }) }), attempt())
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StepFailed);
    expect((err as Error).message).to.equal(
      'step 1 (s1), asked again over the state as it is now, failed: failBeforeRunningIf held: other == 1',
    );
  });

  it('names an unnamed previous step by its order alone when asking it again fails', async () => {
    const world = engineWorld([step(1, { name: '', failBeforeRunningIf: 'other == 1' }), step(2)]);
    const run = world.runs.runs.get('run_1')!;
    run.stateJson = JSON.stringify({ input: {}, other: 1 });
    run.stateVersion = 1;
    const err = await runnerOf(world)
      .runChainStep(stepInput(2, { previous: { ...handed({ step1: 'one' }), name: '' } }), attempt())
      .catch((e: unknown) => e);
    expect((err as Error).message).to.equal(
      'step 1, asked again over the state as it is now, failed: failBeforeRunningIf held: other == 1',
    );
  });

  it('asks the previous step again over the moved state and goes on when it succeeds', async () => {
    const world = engineWorld([step(1), step(2)], {
      replies: [{ content: 'one again' }, { content: 'two' }],
    });
    const run = world.runs.runs.get('run_1')!;
    run.stateJson = JSON.stringify({ input: {}, other: 1 });
    run.stateVersion = 1;
    const outcome = await runnerOf(world, new WriteThroughRunStore(world.deps.repos)).runChainStep(
      stepInput(2, { previous: handed({ step1: 'one' }) }),
      attempt(),
    );
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(stateOf(world)).to.deep.equal({ input: {}, other: 1, step1: 'one again', step2: 'two' });
  });

  it('stops when the run was re-run before the previous success was written', async () => {
    const world = engineWorld([step(1), step(2)]);
    world.runs.runs.get('run_1')!.generation = 2;
    const err = await runnerOf(world)
      .runChainStep(stepInput(2, { previous: handed({ step1: 'one' }) }), attempt())
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RunSuperseded);
    expect((err as Error).message).to.equal('the run was re-run or deleted');
  });
});
