import { expect } from 'chai';
import { StepFailed } from '@lib/chains/engine/errors';
import { attempt, engineWorld, ORG, runnerOf, schemaOf, step, stepInput, type World } from './engine-world';

const USED_UP = "the organization's credits are used up; an operator can grant more";
const begin = { organizationId: ORG, runId: 'run_1', generation: 1, actionChainId: 'chn_1' };

const failure = (world: World, input = stepInput(1)) =>
  runnerOf(world)
    .runChainStep(input, attempt())
    .then(
      () => undefined,
      (e: unknown) => e as Error,
    );

const firstMessages = (world: World) => world.model.requests[0]!.messages as Array<{ content: string }>;

// docs/chains.md "Steps" and "Paying for a step".
describe("a chain step's prompt and payment (engine, in memory)", () => {
  it("tells the model the chain's instructions and the step's name and description, over the rendered instructions", async () => {
    const world = engineWorld(
      [step(1, { name: 'classify', description: 'sort mail', instructions: 'Classify: {{input.message}}' })],
      { replies: [{ content: 'x' }] },
    );
    await runnerOf(world).runChainStep(stepInput(1), attempt());
    expect(firstMessages(world)).to.deep.equal([
      { role: 'system', content: 'Be brief.\n\nThis step: classify: sort mail' },
      { role: 'user', content: 'Classify: hi' },
    ]);
  });

  it("says only the chain's instructions for a step without name or description", async () => {
    const world = engineWorld([step(1, { name: '' })], { replies: [{ content: 'x' }] });
    await runnerOf(world).runChainStep(stepInput(1), attempt());
    expect(firstMessages(world)[0]!.content).to.equal('Be brief.');
  });

  it('shows the whole state after the instructions when the step asks for it', async () => {
    const world = engineWorld([step(1, { showWholeChainState: true })], { replies: [{ content: 'x' }] });
    await runnerOf(world).runChainStep(stepInput(1), attempt());
    expect(firstMessages(world)[1]!.content).to.equal(
      'do 1\n\nThe chain\'s state so far:\n{\n "input": {\n  "message": "hi"\n }\n}',
    );
  });

  it('fails a step whose instructions cannot be rendered, before any call', async () => {
    const world = engineWorld([step(1, { instructions: '{{nope x}}' })]);
    const err = await failure(world);
    expect(err).to.be.instanceOf(StepFailed);
    expect(err!.message).to.equal(
      'instructions could not be rendered: You specified knownHelpersOnly, but used the unknown helper nope - 1:0',
    );
    expect(world.model.requests).to.have.length(0);
  });

  it('fails a step at a zero balance before it asks the model', async () => {
    const world = engineWorld([step(1)], { balance: 0, replies: [{ content: 'x' }] });
    const err = await failure(world);
    expect(err).to.be.instanceOf(StepFailed);
    expect(err!.message).to.equal(USED_UP);
    expect(world.model.requests).to.have.length(0);
  });

  it('lets any other failure of the credit check through as it is', async () => {
    const world = engineWorld([step(1)], { replies: [{ content: 'x' }] });
    const down = new Error('credits store down');
    world.credits.requireCredits = () => Promise.reject(down);
    expect(await failure(world)).to.equal(down);
  });

  it("reads the balance again once this worker's last debit took it to zero, and fails the next step", async () => {
    const world = engineWorld([step(1), step(2)], {
      balance: 1,
      replies: [{ content: 'a' }, { content: 'b' }],
    });
    world.credits.slowPayments = true;
    const runner = runnerOf(world);
    await runner.beginRun(begin);
    const first = await runner.runChainStep(stepInput(1, { handsOnResults: true }), attempt());
    expect(world.credits.reads).to.equal(0);
    const err = await runner
      .runChainStep(
        stepInput(2, { previous: first.kind === 'success' ? first.unwritten : undefined }),
        attempt(),
      )
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(err!.message).to.equal(USED_UP);
    expect(world.credits.reads).to.equal(1);
    expect(world.model.requests).to.have.length(1);
  });

  it('pays for every answer of a step that never fit its schema, naming the step', async () => {
    const world = engineWorld([step(1, { outputSchemaJson: schemaOf('a') })], {
      replies: [{ content: '{}' }, { content: '{}' }, { content: '{}' }],
    });
    const err = await failure(world);
    expect((err as StepFailed).spent!.modelCalls).to.equal(3);
    expect(world.credits.usage).to.deep.equal(
      [1, 2, 3].map(() => ({ model: 'gpt-test', prompt: 10, completion: 5, reference: 'stp_1' })),
    );
    expect(world.credits.purposes).to.deep.equal(['chain-step', 'chain-step', 'chain-step']);
  });

  it("logs a failed step's payment that fails, and fails the step for its own reason", async () => {
    const world = engineWorld([step(1, { outputSchemaJson: schemaOf('a') })], {
      replies: [{ content: '{}' }, { content: '{}' }, { content: '{}' }],
    });
    const down = new Error('ledger down');
    world.credits.recordUsage = () => Promise.reject(down);
    const err = await failure(world);
    expect(err!.message).to.match(/^the answer did not fit the output schema after 3 attempts/);
    expect(world.logged).to.deep.equal([
      { level: 'error', msg: 'the model calls of a failed chain step could not be paid for' },
    ]);
    expect(world.logFields).to.deep.equal([
      { err: down, organizationId: ORG, runId: 'run_1', stepId: 'stp_1' },
    ]);
  });

  it("logs a step's payment that fails, and keeps its success", async () => {
    const world = engineWorld([step(1)], { replies: [{ content: 'x' }] });
    const down = new Error('ledger down');
    world.credits.recordUsage = () => Promise.reject(down);
    const runner = runnerOf(world);
    expect(await runner.runChainStep(stepInput(1), attempt())).to.deep.equal({ kind: 'success' });
    await runner.billing.settled(stepInput(1));
    expect(world.logged).to.deep.equal([{ level: 'error', msg: 'a chain step could not be paid for' }]);
    expect(world.logFields).to.deep.equal([
      { err: down, organizationId: ORG, runId: 'run_1', stepId: 'stp_1' },
    ]);
  });
});
