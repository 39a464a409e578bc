import { expect } from 'chai';
import { RunSuperseded, StepFailed } from '@lib/chains/engine/errors';
import { attempt, engineWorld, runnerOf, stateOf, step, stepInput } from './engine-world';

const omitTime = <T extends { finishedAt?: unknown }>(o: T) => ({ ...o, finishedAt: undefined });

// "Handing a result on" of docs/chains.md: a step returns its success before it is written when its new fields'
// JSON is at most 16 KB, it has no failAfterRunningIf and it is not the execution's last.
describe('chain step results handed on or written (engine, in memory)', () => {
  it('hands on a small success of a step that is not the last, with what it added and the version it read', async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'hello' }] });
    world.runs.runs.get('run_1')!.stateVersion = 3;
    const runner = runnerOf(world);
    const input = stepInput(1, { handsOnResults: true });
    const outcome = await runner.runChainStep(input, attempt());
    expect(outcome.kind).to.equal('success');
    const unwritten = (outcome as { unwritten: { finishedAt: string } }).unwritten;
    expect(omitTime(unwritten)).to.deep.equal({
      stepId: 'stp_1',
      stepOrder: 1,
      name: 's1',
      modelCalls: 1,
      finishedAt: undefined,
      fields: { step1: 'hello' },
      version: 3,
    });
    expect(unwritten.finishedAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(
      await runner.store.writePrevious({
        ...input,
        previous: outcome.kind === 'success' ? outcome.unwritten : undefined,
      }),
    ).to.equal('written');
    expect(stateOf(world)).to.deep.equal({ input: { message: 'hi' }, step1: 'hello' });
    expect(world.runs.runs.get('run_1')!.stepResults.stp_1).to.include({ outcome: 'success', modelCalls: 1 });
  });

  it("marks the run running from the first step's own read, even over a copy held", async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'hello' }] });
    const runner = runnerOf(world);
    await runner.store.read(stepInput(1));
    await runner.runChainStep(stepInput(1, { marksRunning: true }), attempt());
    expect(world.runs.runs.get('run_1')!.status).to.equal('running');
  });

  it('writes before it returns without handsOnResults', async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'hello' }] });
    const outcome = await runnerOf(world).runChainStep(stepInput(1), attempt());
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(stateOf(world).step1).to.equal('hello');
  });

  it('hands on new fields of exactly 16 KB of JSON, and writes first one character more', async () => {
    // {"step1":"…"} is 12 characters around the text.
    for (const [chars, handedOn] of [
      [16 * 1024 - 12, true],
      [16 * 1024 - 11, false],
    ] as const) {
      const world = engineWorld([step(1), step(2)], { replies: [{ content: 'x'.repeat(chars) }] });
      world.deps.chains.stateMaxBytes = 100_000;
      const outcome = await runnerOf(world).runChainStep(stepInput(1, { handsOnResults: true }), attempt());
      expect('unwritten' in outcome, `${chars} characters`).to.equal(handedOn);
    }
  });

  it("ends the run when the execution's last step succeeds (never handed on), its sessions first", async () => {
    const world = engineWorld([step(1)], { replies: [{ content: 'done' }] });
    const runner = runnerOf(world);
    const outcome = await runner.runChainStep(
      stepInput(1, { handsOnResults: true, finishesRun: true }),
      attempt(),
    );
    expect(outcome).to.deep.equal({ kind: 'success' });
    const run = world.runs.runs.get('run_1')!;
    expect(run).to.include({ status: 'success', statusMessage: null });
    expect(JSON.parse(run.stateJson)).to.deep.equal({ input: { message: 'hi' }, step1: 'done' });
    expect(world.ended).to.deep.equal(['run_1']);
    expect(world.credits.usage).to.have.length(1);
  });

  it('shows a run ended only once its steps are paid for', async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'one' }, { content: 'two' }] });
    world.credits.slowPayments = true;
    const runner = runnerOf(world);
    const first = await runner.runChainStep(stepInput(1, { handsOnResults: true }), attempt());
    await runner.runChainStep(
      stepInput(2, { finishesRun: true, previous: first.kind === 'success' ? first.unwritten : undefined }),
      attempt(),
    );
    expect(world.runs.paidWhenFinished).to.equal(2);
    expect(world.logged).to.deep.include({ level: 'info', msg: 'chain run finished' });
  });

  it("ends the run when the execution's last step is skipped, and not when it fails", async () => {
    const skipped = engineWorld([step(1, { runIf: 'false' })]);
    await runnerOf(skipped).runChainStep(stepInput(1, { finishesRun: true }), attempt());
    expect(skipped.runs.runs.get('run_1')!.status).to.equal('success');
    const failed = engineWorld([step(1, { failBeforeRunningIf: 'true' })]);
    await runnerOf(failed).runChainStep(stepInput(1, { finishesRun: true }), attempt());
    expect(failed.runs.runs.get('run_1')!.status).to.equal('pending');
    expect(failed.ended).to.deep.equal([]);
  });

  it('fails a step whose new state is over CHAIN_STATE_MAX_BYTES, naming the size, whether handed on or not', async () => {
    for (const handsOnResults of [true, false]) {
      const world = engineWorld([step(1), step(2)], { replies: [{ content: 'é'.repeat(2000) }] });
      const err = await runnerOf(world)
        .runChainStep(stepInput(1, { handsOnResults }), attempt())
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StepFailed);
      // {"input":{"message":"hi"},"step1":"…"}: 37 bytes around 2,000 two-byte characters.
      expect((err as Error).message).to.equal(
        "the run's state would hold 4037 bytes; at most 4000 (CHAIN_STATE_MAX_BYTES)",
      );
      expect(world.runs.recordCalls).to.have.length(0);
    }
  });

  it('stops an execution whose run was re-run while its step asked the model (the call still billed)', async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'late' }] });
    world.runs.beforeRecord = () => void (world.runs.runs.get('run_1')!.generation = 2);
    const runner = runnerOf(world);
    const err = await runner.runChainStep(stepInput(1), attempt()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RunSuperseded);
    expect((err as Error).message).to.equal('the run was re-run or deleted');
    await runner.billing.settled(stepInput(1));
    expect(world.credits.usage).to.have.length(1);
    expect(world.runs.runs.get('run_1')!.stepResults).to.deep.equal({});
  });
});
