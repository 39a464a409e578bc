import { expect } from 'chai';
import { FanOutRunner } from '@lib/chains/engine/fan-out';
import { RunSuperseded, StepFailed } from '@lib/chains/engine/errors';
import { attempt, engineWorld, runnerOf, step, stepInput, type Step } from './engine-world';

const xs = (n: number) => ({ input: { xs: Array.from({ length: n }, (_, i) => `x${i}`) } });
const fanOutStep = (fields: Partial<Step> = {}) =>
  step(1, { forEachElement: '$.input.xs', instructions: 'Say {{element}} at {{elementIndex}}', ...fields });

function fanOutWorld(n: number, replies: Array<{ content: string }> = [], fields: Partial<Step> = {}) {
  const world = engineWorld([fanOutStep(fields), step(2)], { state: xs(n), replies });
  const steps = runnerOf(world);
  return { world, steps, elements: new FanOutRunner(world.deps, steps) };
}

const element = (index: number) => ({ ...stepInput(1), index });
const stored = (world: ReturnType<typeof engineWorld>) =>
  [...world.runs.elements.values()].map((e) => ({
    index: e.index,
    elementJson: e.elementJson,
    outputJson: e.outputJson,
  }));

// docs/chains.md "Fan-out": the elements are stored with the run, each element one activity that stores its own
// output; at most CHAIN_FANOUT_MAX elements; a resumed fan-out runs only the elements without an output.
describe('fan-out elements (engine, in memory)', () => {
  it('stores the elements a fan-out step selects, and says how to cut them up', async () => {
    const { world, steps } = fanOutWorld(2);
    const outcome = await steps.runChainStep(stepInput(1), attempt());
    expect(outcome).to.deep.equal({
      kind: 'fan-out',
      elements: 2,
      fanOut: { batchSize: 250, concurrency: 8 },
    });
    expect(stored(world)).to.deep.equal([
      { index: 0, elementJson: '"x0"', outputJson: null },
      { index: 1, elementJson: '"x1"', outputJson: null },
    ]);
  });

  it('fails a fan-out step whose path selects no array, storing nothing', async () => {
    const world = engineWorld([fanOutStep()], { state: { input: { xs: 5 } } });
    const outcome = await runnerOf(world).runChainStep(stepInput(1), attempt());
    expect(outcome).to.deep.equal({
      kind: 'failed',
      detail: 'forEachElement $.input.xs selects number, not an array',
    });
    expect(world.runs.elements.size).to.equal(0);
  });

  it('runs exactly CHAIN_FANOUT_MAX elements, and fails one more before storing any', async () => {
    expect((await fanOutWorld(3).steps.runChainStep(stepInput(1), attempt())).kind).to.equal('fan-out');
    const { world, steps } = fanOutWorld(4);
    expect(await steps.runChainStep(stepInput(1), attempt())).to.deep.equal({
      kind: 'failed',
      detail:
        'forEachElement $.input.xs selects 4 elements; a fan-out step runs over at most 3 (CHAIN_FANOUT_MAX)',
    });
    expect(world.runs.elements.size).to.equal(0);
  });

  it('keeps the outputs of the same elements, and starts afresh over other elements or for onlyStep', async () => {
    const { world, steps } = fanOutWorld(2);
    await steps.runChainStep(stepInput(1), attempt());
    await world.runs.putElementOutput('run_1', 'stp_1', 0, { outputJson: '"kept"', modelCalls: 1 });
    await steps.runChainStep(stepInput(1, { generation: 1 }), attempt(true));
    expect(stored(world)[0]!.outputJson).to.equal('"kept"');
    await steps.runChainStep(stepInput(1, { onlyStep: 1 }), attempt(true));
    expect(stored(world)[0]!.outputJson).to.equal(null);
    await world.runs.putElementOutput('run_1', 'stp_1', 0, { outputJson: '"kept"', modelCalls: 1 });
    world.runs.runs.get('run_1')!.stateJson = JSON.stringify({ input: { xs: ['y0'] } });
    await steps.runChainStep(stepInput(1), attempt(true));
    expect(stored(world)).to.deep.equal([{ index: 0, elementJson: '"y0"', outputJson: null }]);
  });

  it('lists the elements of a slice that have no output yet', async () => {
    const { world, steps, elements } = fanOutWorld(3);
    await steps.runChainStep(stepInput(1), attempt());
    await world.runs.putElementOutput('run_1', 'stp_1', 1, { outputJson: '"done"', modelCalls: 1 });
    expect(await elements.pending({ ...stepInput(1), from: 0, to: 3, concurrency: 8 })).to.deep.equal([0, 2]);
    expect(await elements.pending({ ...stepInput(1), from: 2, to: 3, concurrency: 8 })).to.deep.equal([2]);
  });

  it('asks the model about one element, stores its output and calls, and pays for it', async () => {
    const { world, steps, elements } = fanOutWorld(2, [{ content: 'answer one' }]);
    // An element is paid for by the time it is done.
    world.credits.slowPayments = true;
    await steps.runChainStep(stepInput(1), attempt());
    await elements.runElement(element(1), attempt());
    expect((world.model.requests[0]!.messages as Array<{ content: string }>)[1]!.content).to.equal(
      'Say x1 at 1',
    );
    expect(world.runs.elements.get('run_1:stp_1:1')).to.include({
      outputJson: '"answer one"',
      modelCalls: 1,
    });
    expect(world.credits.usage).to.deep.equal([
      { model: 'gpt-test', prompt: 10, completion: 5, reference: 'stp_1' },
    ]);
  });

  it('does not ask again about an element that has its output', async () => {
    const { world, steps, elements } = fanOutWorld(1);
    await steps.runChainStep(stepInput(1), attempt());
    await world.runs.putElementOutput('run_1', 'stp_1', 0, { outputJson: '"done"', modelCalls: 1 });
    await elements.runElement(element(0), attempt());
    expect(world.model.requests).to.have.length(0);
  });

  it('stops an element whose elements were replaced (superseded)', async () => {
    const { elements } = fanOutWorld(1);
    const err = await elements.runElement(element(0), attempt()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RunSuperseded);
    expect((err as Error).message).to.equal('the fan-out elements were replaced');
  });

  it("pays for an element's answer too large to keep, and fails the step naming the size", async () => {
    const { world, steps, elements } = fanOutWorld(1, [{ content: 'é'.repeat(2000) }]);
    world.credits.slowPayments = true;
    await steps.runChainStep(stepInput(1), attempt());
    const err = await elements.runElement(element(0), attempt()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StepFailed);
    // The JSON string: 2,000 two-byte characters and two quotes.
    expect((err as Error).message).to.equal(
      "the element's output would hold 4002 bytes; at most 4000 (CHAIN_STATE_MAX_BYTES)",
    );
    expect(world.credits.usage).to.have.length(1);
    expect(world.runs.elements.get('run_1:stp_1:0')!.outputJson).to.equal(null);
  });

  it("loads a step's run once for all its elements on a worker", async () => {
    const { world, steps, elements } = fanOutWorld(2, [{ content: 'a' }, { content: 'b' }]);
    await steps.runChainStep(stepInput(1), attempt());
    const before = world.runs.reads;
    await elements.runElement(element(0), attempt(true));
    await elements.runElement(element(1), attempt(true));
    expect(world.runs.reads - before).to.equal(1);
  });

  it('loads the step again for the next element once a load failed', async () => {
    const { world, steps, elements } = fanOutWorld(1, [{ content: 'ok' }]);
    await steps.runChainStep(stepInput(1), attempt());
    world.runs.runs.get('run_1')!.generation = 2;
    expect(await elements.runElement(element(0), attempt(true)).catch((e: unknown) => e)).to.be.instanceOf(
      RunSuperseded,
    );
    world.runs.runs.get('run_1')!.generation = 1;
    await elements.runElement(element(0), attempt(true));
    expect(world.runs.elements.get('run_1:stp_1:0')!.outputJson).to.equal('"ok"');
  });
});
