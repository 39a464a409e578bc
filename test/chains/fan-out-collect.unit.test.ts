import { expect } from 'chai';
import { FanOutRunner } from '@lib/chains/engine/fan-out';
import { StaleSnapshot } from '@lib/chains/engine/errors';
import {
  attempt,
  engineWorld,
  runnerOf,
  schemaOf,
  stateOf,
  step,
  stepInput,
  type Step,
} from './engine-world';

async function collected(outputs: Array<string | null>, fields: Partial<Step> = {}, input = stepInput(1)) {
  const world = engineWorld([step(1, { forEachElement: '$.input.xs', ...fields }), step(2)], {
    state: { input: { xs: outputs.map((_, i) => i) } },
  });
  const steps = runnerOf(world);
  await steps.runChainStep(stepInput(1), attempt());
  for (const [index, outputJson] of outputs.entries())
    if (outputJson !== null)
      await world.runs.putElementOutput('run_1', 'stp_1', index, { outputJson, modelCalls: index + 1 });
  const outcome = await new FanOutRunner(world.deps, steps).collect(input, attempt());
  return { world, outcome };
}

// docs/chains.md "State": a fan-out step adds each output field as an array in element order.
describe("collecting a fan-out step's outputs (engine, in memory)", () => {
  it('fails the step naming the first element without an output, keeping the elements', async () => {
    const { world, outcome } = await collected(['"a"', null, null]);
    expect(outcome).to.deep.equal({ kind: 'failed', detail: 'element 1 has no output' });
    expect(world.runs.elements.size).to.equal(3);
    expect((await collected([null, '"b"'])).outcome).to.deep.equal({
      kind: 'failed',
      detail: 'element 0 has no output',
    });
  });

  it('joins each declared output field as an array in element order (null where an answer lacks it)', async () => {
    const { world, outcome } = await collected(['{"a":"1","b":"x"}', '{"a":"2"}'], {
      outputSchemaJson: schemaOf('a', 'b'),
    });
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(stateOf(world)).to.deep.equal({ input: { xs: [0, 1] }, a: ['1', '2'], b: ['x', null] });
  });

  it('adds the texts of a step without output schema as step<stepOrder>, records the calls and clears the elements', async () => {
    const { world } = await collected(['"one"', '"two"', '"three"']);
    expect(stateOf(world).step1).to.deep.equal(['one', 'two', 'three']);
    expect(world.runs.runs.get('run_1')!.stepResults.stp_1).to.include({ outcome: 'success', modelCalls: 6 });
    expect(world.runs.elements.size).to.equal(0);
  });

  it('keeps the elements when failAfterRunningIf refuses the joined state', async () => {
    const { world, outcome } = await collected(['"one"'], { failAfterRunningIf: 'step1[0] == "one"' });
    expect(outcome).to.deep.equal({
      kind: 'failed',
      detail: 'failAfterRunningIf held: step1[0] == "one"',
      modelCalls: 1,
    });
    expect(world.runs.elements.size).to.equal(1);
  });

  it("ends the run when it is the execution's last step", async () => {
    const { world } = await collected(['"one"'], {}, stepInput(1, { finishesRun: true }));
    expect(world.runs.runs.get('run_1')!.status).to.equal('success');
  });

  it('collects over the run read afresh on a retried attempt', async () => {
    const world = engineWorld([step(1, { forEachElement: '$.input.xs' })], { state: { input: { xs: [0] } } });
    const steps = runnerOf(world);
    await steps.runChainStep(stepInput(1), attempt());
    await world.runs.putElementOutput('run_1', 'stp_1', 0, { outputJson: '"one"', modelCalls: 1 });
    // Another worker wrote the state after this worker's copy was taken.
    const run = world.runs.runs.get('run_1')!;
    run.stateJson = JSON.stringify({ input: { xs: [0] }, other: 1 });
    run.stateVersion = 1 + (run.stateVersion ?? 0);
    const elements = new FanOutRunner(world.deps, steps);
    expect(await elements.collect(stepInput(1), attempt(false)).catch((e: unknown) => e)).to.be.instanceOf(
      StaleSnapshot,
    );
    await steps.store.read(stepInput(1));
    run.stateVersion = 1 + (run.stateVersion ?? 0);
    expect(await elements.collect(stepInput(1), attempt(true))).to.deep.equal({ kind: 'success' });
    expect(stateOf(world)).to.deep.equal({ input: { xs: [0] }, other: 1, step1: ['one'] });
  });
});
