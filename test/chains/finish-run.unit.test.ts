import { expect } from 'chai';
import type { FinishRunInput } from '@lib/chains/engine/step-runner';
import { engineWorld, ORG, runnerOf, step } from './engine-world';

const ending = (fields: Partial<FinishRunInput>): FinishRunInput => ({
  organizationId: ORG,
  runId: 'run_1',
  generation: 1,
  actionChainId: 'chn_1',
  status: 'failed',
  statusMessage: 'step 2 (s2) failed: failAfterRunningIf held: x',
  ...fields,
});

// docs/chains.md "Runs": steps says how each step ended and how many model calls it made, a failed step's too;
// a fan-out step that an element failed counts the calls of every element that ran.
describe('the end of a chain run (engine, in memory)', () => {
  it("records the failed step with the run's message and the calls it made, then the run's status", async () => {
    const world = engineWorld([step(1), step(2)]);
    await runnerOf(world).finishRun(ending({ failedStepId: 'stp_2', failedStepModelCalls: 3 }));
    const run = world.runs.runs.get('run_1')!;
    expect({ ...run.stepResults.stp_2, finishedAt: undefined }).to.deep.equal({
      stepId: 'stp_2',
      stepOrder: 2,
      name: 's2',
      outcome: 'failed',
      detail: 'step 2 (s2) failed: failAfterRunningIf held: x',
      modelCalls: 3,
      generation: 1,
      finishedAt: undefined,
    });
    expect(run).to.include({
      status: 'failed',
      statusMessage: 'step 2 (s2) failed: failAfterRunningIf held: x',
    });
    expect(world.ended).to.deep.equal(['run_1']);
  });

  it('counts a failed step without calls as none', async () => {
    const world = engineWorld([step(1)]);
    await runnerOf(world).finishRun(ending({ failedStepId: 'stp_1' }));
    expect(world.runs.runs.get('run_1')!.stepResults.stp_1!.modelCalls).to.equal(0);
  });

  it('adds the calls of every element of a fan-out step an element failed', async () => {
    const world = engineWorld([step(1, { forEachElement: '$.input.xs' })]);
    await world.runs.putElements('run_1', 'stp_1', ['a', 'b', 'c'], 'f');
    await world.runs.putElementOutput('run_1', 'stp_1', 0, { outputJson: '"A"', modelCalls: 2 });
    await world.runs.putElementOutput('run_1', 'stp_1', 2, { outputJson: '"C"', modelCalls: 4 });
    await runnerOf(world).finishRun(
      ending({ failedStepId: 'stp_1', failedStepModelCalls: 1, failedInFanOut: true }),
    );
    expect(world.runs.runs.get('run_1')!.stepResults.stp_1!.modelCalls).to.equal(7);
  });

  it("does not count the elements' calls when no element failed the step", async () => {
    const world = engineWorld([step(1, { forEachElement: '$.input.xs' })]);
    await world.runs.putElements('run_1', 'stp_1', ['a'], 'f');
    await world.runs.putElementOutput('run_1', 'stp_1', 0, { outputJson: '"A"', modelCalls: 2 });
    await runnerOf(world).finishRun(ending({ failedStepId: 'stp_1', failedStepModelCalls: 1 }));
    expect(world.runs.runs.get('run_1')!.stepResults.stp_1!.modelCalls).to.equal(1);
  });

  it('records no step when none failed, and reads the chain from the run for an older input', async () => {
    const world = engineWorld([step(1)]);
    await runnerOf(world).finishRun(
      ending({ actionChainId: undefined, status: 'success', statusMessage: null }),
    );
    const run = world.runs.runs.get('run_1')!;
    expect(run.stepResults).to.deep.equal({});
    expect(run).to.include({ status: 'success', statusMessage: null });
    expect(world.ended).to.deep.equal(['run_1']);
  });

  it('records a failed step of an older input (no actionChainId) from the run', async () => {
    const world = engineWorld([step(1)]);
    await runnerOf(world).finishRun(ending({ actionChainId: undefined, failedStepId: 'stp_1' }));
    expect(world.runs.runs.get('run_1')!.stepResults.stp_1!.outcome).to.equal('failed');
  });

  it('writes nothing for an execution the run no longer belongs to', async () => {
    const world = engineWorld([step(1)]);
    world.runs.runs.get('run_1')!.generation = 2;
    await runnerOf(world).finishRun(ending({ failedStepId: 'stp_1' }));
    const run = world.runs.runs.get('run_1')!;
    expect(run.stepResults).to.deep.equal({});
    expect(run.status).to.equal('pending');
  });

  it('writes the success the last step handed on before the run is shown ended', async () => {
    const world = engineWorld([step(1), step(2)]);
    await runnerOf(world).finishRun(
      ending({
        failedStepId: 'stp_2',
        previous: {
          stepId: 'stp_1',
          stepOrder: 1,
          name: 's1',
          modelCalls: 1,
          finishedAt: '2026-01-02T03:04:05.000Z',
          fields: { step1: 'one' },
          version: 0,
        },
      }),
    );
    const run = world.runs.runs.get('run_1')!;
    expect(JSON.parse(run.stateJson)).to.deep.equal({ input: { message: 'hi' }, step1: 'one' });
    expect(run.stepResults.stp_1!.outcome).to.equal('success');
    expect(run.stepResults.stp_2!.outcome).to.equal('failed');
  });

  it('ends the execution of a deleted run whose input names no chain without failing, writing nothing', async () => {
    const world = engineWorld([step(1)]);
    world.runs.runs.delete('run_1');
    await runnerOf(world).finishRun(ending({ actionChainId: undefined, failedStepId: 'stp_1' }));
    expect(world.runs.runs.size).to.equal(0);
  });

  it("logs the run's end with its organization, run and status", async () => {
    const world = engineWorld([step(1)]);
    await runnerOf(world).finishRun(ending({ status: 'success', statusMessage: null }));
    expect(world.logged).to.deep.equal([{ level: 'info', msg: 'chain run finished' }]);
    expect(world.logFields).to.deep.equal([{ organizationId: ORG, runId: 'run_1', status: 'success' }]);
  });
});
