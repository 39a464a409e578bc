import { expect } from 'chai';
import { StepFailed } from '@lib/chains/engine/errors';
import { WriteThroughRunStore } from '@lib/chains/engine/write-through-run-store';
import { attempt, engineWorld, runnerOf, schemaOf, stateOf, step, stepInput } from './engine-world';

// The guards of docs/chains.md: runIf skips (counts as done), failBeforeRunningIf fails before the model,
// failAfterRunningIf fails over the new state (its model call made and billed).
describe('chain step guards (engine, in memory)', () => {
  it('skips a step whose runIf does not hold, records why, and asks no model', async () => {
    const world = engineWorld([step(1, { runIf: 'input.message == "bye"' })]);
    const outcome = await runnerOf(world).runChainStep(stepInput(1), attempt());
    expect(outcome).to.deep.equal({ kind: 'skipped' });
    const result = world.runs.runs.get('run_1')!.stepResults.stp_1;
    expect(result).to.include({
      outcome: 'skipped',
      detail: 'runIf did not hold: input.message == "bye"',
      modelCalls: 0,
      stepOrder: 1,
      name: 's1',
      generation: 1,
    });
    expect(world.model.requests).to.have.length(0);
  });

  it('runs a step whose runIf holds', async () => {
    const world = engineWorld([step(1, { runIf: 'input.message == "hi"' })], {
      replies: [{ content: 'ok' }],
    });
    const outcome = await runnerOf(world).runChainStep(stepInput(1), attempt());
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(stateOf(world)).to.deep.equal({ input: { message: 'hi' }, step1: 'ok' });
  });

  it('fails a step whose failBeforeRunningIf holds, before any model call, writing nothing', async () => {
    const world = engineWorld([step(1, { failBeforeRunningIf: 'input.message == "hi"' })]);
    const outcome = await runnerOf(world).runChainStep(stepInput(1), attempt());
    expect(outcome).to.deep.equal({
      kind: 'failed',
      detail: 'failBeforeRunningIf held: input.message == "hi"',
    });
    expect(world.model.requests).to.have.length(0);
    expect(world.runs.recordCalls).to.have.length(0);
  });

  it('runs a step whose failBeforeRunningIf does not hold', async () => {
    const world = engineWorld([step(1, { failBeforeRunningIf: 'input.message == "bye"' })], {
      replies: [{ content: 'ok' }],
    });
    expect(await runnerOf(world).runChainStep(stepInput(1), attempt())).to.deep.equal({ kind: 'success' });
  });

  it('fails a step whose failAfterRunningIf holds over the new state, counting and billing its call', async () => {
    const world = engineWorld(
      [step(1, { outputSchemaJson: schemaOf('category'), failAfterRunningIf: 'category == "spam"' })],
      { replies: [{ content: '{"category":"spam"}' }] },
    );
    const runner = runnerOf(world);
    const outcome = await runner.runChainStep(stepInput(1, { handsOnResults: true }), attempt());
    expect(outcome).to.deep.equal({
      kind: 'failed',
      detail: 'failAfterRunningIf held: category == "spam"',
      modelCalls: 1,
    });
    expect(world.runs.recordCalls).to.have.length(0);
    await runner.billing.settled(stepInput(1));
    expect(world.credits.usage).to.deep.equal([
      { model: 'gpt-test', prompt: 10, completion: 5, reference: 'stp_1' },
    ]);
  });

  it('writes a step whose failAfterRunningIf does not hold before it returns (never handed on)', async () => {
    const world = engineWorld(
      [
        step(1, { outputSchemaJson: schemaOf('category'), failAfterRunningIf: 'category == "spam"' }),
        step(2),
      ],
      { replies: [{ content: '{"category":"billing"}' }] },
    );
    const outcome = await runnerOf(world).runChainStep(stepInput(1, { handsOnResults: true }), attempt());
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(stateOf(world)).to.deep.equal({ input: { message: 'hi' }, category: 'billing' });
  });

  it('fails a step whose guard cannot be evaluated, naming the guard', async () => {
    for (const field of ['runIf', 'failBeforeRunningIf', 'failAfterRunningIf'] as const) {
      const world = engineWorld([step(1, { [field]: 'input|nope' })], { replies: [{ content: 'ok' }] });
      const err = await runnerOf(world)
        .runChainStep(stepInput(1), attempt())
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).to.be.instanceOf(StepFailed);
      expect((err as Error).message).to.equal(
        `${field} could not be evaluated: Transform nope is not defined.`,
      );
    }
  });

  it('returns what a step recorded in this execution without asking again; a failed one runs again', async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'again' }] });
    const run = world.runs.runs.get('run_1')!;
    const at = new Date('2026-01-01T00:00:00Z');
    const result = { stepOrder: 1, name: 's1', detail: null, modelCalls: 1, finishedAt: at };
    run.stepResults.stp_1 = { ...result, stepId: 'stp_1', outcome: 'skipped', generation: 1 };
    run.stepResults.stp_2 = { ...result, stepId: 'stp_2', outcome: 'failed', generation: 1 };
    const runner = runnerOf(world, new WriteThroughRunStore(world.deps.repos));
    expect(await runner.runChainStep(stepInput(1), attempt())).to.deep.equal({ kind: 'skipped' });
    expect(world.model.requests).to.have.length(0);
    expect(await runner.runChainStep(stepInput(2), attempt())).to.deep.equal({ kind: 'success' });
    expect(world.model.requests).to.have.length(1);
  });

  it("runs again a step that succeeded in an earlier execution (another generation's result)", async () => {
    const world = engineWorld([step(1)], { replies: [{ content: 'new' }] });
    const run = world.runs.runs.get('run_1')!;
    run.generation = 2;
    run.stepResults.stp_1 = {
      stepId: 'stp_1',
      stepOrder: 1,
      name: 's1',
      outcome: 'success',
      detail: null,
      modelCalls: 1,
      generation: 1,
      finishedAt: new Date(),
    };
    const outcome = await runnerOf(world).runChainStep(stepInput(1, { generation: 2 }), attempt());
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(stateOf(world).step1).to.equal('new');
  });

  it('fails a step deleted from its chain', async () => {
    const world = engineWorld([step(1)]);
    const err = await runnerOf(world)
      .runChainStep(stepInput(7), attempt())
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StepFailed);
    expect((err as Error).message).to.equal('the step was deleted');
  });
});
