import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import OpenAI from 'openai';
import { createChainActivities, type ChainActivityDeps } from '@activities/chains/runs';
import { engineWorld, ORG, schemaOf, step, stepInput, type World } from './engine-world';

type CreateRun = ChainActivityDeps['runs']['createRun'];

function activitiesOf(world: World, createRun?: CreateRun) {
  const runs = { createRun: createRun ?? (() => Promise.reject(new Error('not expected'))) };
  return createChainActivities({ ...world.deps, runs });
}

/** Runs `work` as an activity's attempt `attempt` and returns what it threw. */
async function thrown(work: () => Promise<unknown>, attempt = 1) {
  return new MockActivityEnvironment({ attempt }).run(work).then(
    () => undefined,
    (e: unknown) => e,
  );
}

const failureOf = (err: unknown) => {
  expect(err).to.be.instanceOf(ApplicationFailure);
  const f = err as ApplicationFailure;
  return { type: f.type, message: f.message, nonRetryable: f.nonRetryable, details: f.details };
};

// docs/chains.md "Where the code is": the engine throws StepFailed, RunSuperseded and ModelRejected, which the
// activities map to the failure types the workflows know (a failed step's failure carries the calls it spent).
describe('the chain activities (engine errors as Temporal failures)', () => {
  it('fails a step for good as ChainStepFailed, carrying the calls it spent', async () => {
    const world = engineWorld([step(1, { outputSchemaJson: schemaOf('a') })], {
      replies: [{ content: '{}' }, { content: '{}' }, { content: '{}' }],
    });
    const err = await thrown(() => activitiesOf(world).runChainStep(stepInput(1)));
    expect(failureOf(err)).to.deep.equal({
      type: 'ChainStepFailed',
      message:
        "the answer did not fit the output schema after 3 attempts: (answer) must have required property 'a'",
      nonRetryable: true,
      details: [
        {
          modelCalls: 3,
          usage: [1, 2, 3].map(() => ({ model: 'gpt-test', promptTokens: 10, completionTokens: 5 })),
        },
      ],
    });
  });

  it('fails a step that spent nothing as ChainStepFailed without details', async () => {
    const world = engineWorld([step(1, { runIf: 'input|nope' })]);
    const err = await thrown(() => activitiesOf(world).runChainStep(stepInput(1)));
    expect(failureOf(err)).to.deep.equal({
      type: 'ChainStepFailed',
      message: 'runIf could not be evaluated: Transform nope is not defined.',
      nonRetryable: true,
      details: [],
    });
  });

  it('stops a superseded execution as ChainRunSuperseded, in every activity that reads the run', async () => {
    const world = engineWorld([step(1)]);
    world.runs.runs.get('run_1')!.generation = 2;
    const activities = activitiesOf(world);
    const superseded = {
      type: 'ChainRunSuperseded',
      message: 'the run was re-run',
      nonRetryable: true,
      details: [],
    };
    expect(failureOf(await thrown(() => activities.runChainStep(stepInput(1))))).to.deep.equal(superseded);
    expect(failureOf(await thrown(() => activities.collectChainFanOut(stepInput(1))))).to.deep.equal(
      superseded,
    );
    expect(
      failureOf(await thrown(() => activities.runChainElement({ ...stepInput(1), index: 0 }))),
    ).to.deep.equal(superseded);
    const begin = { organizationId: ORG, runId: 'run_1', generation: 1, actionChainId: 'chn_1' };
    expect(failureOf(await thrown(() => activities.beginChainRun(begin)))).to.deep.include({
      type: 'ChainRunSuperseded',
      message: 'the run was re-run or deleted',
    });
  });

  it('fails a request the model refused as LlmRequestRejected, and lets other errors be retried', async () => {
    const refused = new OpenAI.APIError(422, { message: 'no' }, undefined, new Headers());
    const world = engineWorld([step(1)], { replies: [{ error: refused }] });
    expect(failureOf(await thrown(() => activitiesOf(world).runChainStep(stepInput(1))))).to.deep.equal({
      type: 'LlmRequestRejected',
      message: 'the model rejected the request (422): 422 no',
      nonRetryable: true,
      details: [],
    });
    const down = new Error('socket hang up');
    const again = engineWorld([step(1)], { replies: [{ error: down }] });
    expect(await thrown(() => activitiesOf(again).runChainStep(stepInput(1)))).to.equal(down);
  });

  it("reads the run afresh on a retried attempt instead of the worker's copy", async () => {
    const world = engineWorld([step(1), step(2)], { replies: [{ content: 'a' }, { content: 'b' }] });
    const activities = activitiesOf(world);
    const env = new MockActivityEnvironment({ attempt: 1 });
    await env.run(() =>
      activities.beginChainRun({
        organizationId: ORG,
        runId: 'run_1',
        generation: 1,
        actionChainId: 'chn_1',
      }),
    );
    world.runs.runs.get('run_1')!.stateVersion = 3;
    await new MockActivityEnvironment({ attempt: 2 }).run(() => activities.runChainStep(stepInput(1)));
    // A first attempt over the stale copy would have asked twice.
    expect(world.model.requests).to.have.length(1);
  });

  it("asks the model with the attempt's cancellation signal", async () => {
    const world = engineWorld([step(1)], { replies: [{ content: 'a' }] });
    const env = new MockActivityEnvironment({ attempt: 1 });
    await env.run(() => activitiesOf(world).runChainStep(stepInput(1)));
    expect(world.model.signals).to.deep.equal([env.context.cancellationSignal]);
  });
});
