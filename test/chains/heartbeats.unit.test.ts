import { mock } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import type OpenAI from 'openai';
import type { StepAttachmentDoc } from '@lib/chains/step-attachment.schema';
import { answerStep } from '@lib/chains/engine/step-model';
import { loadStepTools, type StepToolDeps } from '@lib/chains/engine/step-tools';
import { createChainActivities } from '@activities/chains/runs';
import { engineWorld, step, stepInput } from './engine-world';

// docs/chains.md "Runs": a step is one activity with a heartbeat (a worker that dies mid-step is replaced within
// the 20-second heartbeat timeout). Time is Node's mocked clock: nothing here waits for real time.
describe('the heartbeat of a chain step waiting for its model (mocked clock)', () => {
  afterEach(() => mock.timers.reset());

  it('beats every 3 seconds while the model has not answered, and stops once it has', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    let answer!: (value: unknown) => void;
    const llm = {
      chat: { completions: { create: () => new Promise((resolve) => (answer = resolve)) } },
    } as unknown as OpenAI;
    let beats = 0;
    const req = {
      model: 'gpt-test',
      reasoning: 'none',
      messages: [],
      tools: [],
      toolChoice: null,
      outputSchemaJson: null,
    };
    const done = answerStep(llm, req, () => Promise.resolve(''), { heartbeat: () => void beats++ });
    mock.timers.tick(2999);
    expect(beats).to.equal(0);
    mock.timers.tick(1);
    expect(beats).to.equal(1);
    mock.timers.tick(6000);
    expect(beats).to.equal(3);
    answer({ model: 'gpt-test', choices: [{ message: { content: 'ok' } }] });
    expect((await done).value).to.equal('ok');
    mock.timers.tick(9000);
    expect(beats).to.equal(3);
  });

  it("beats every 2 seconds while an attached agent answers the step's question", async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    let answer!: (value: unknown) => void;
    const deps = {
      agents: { getMany: () => Promise.resolve([{ agentId: 'agt_1', name: 'A', description: 'd' }]) },
      temporal: {
        taskQueue: 'q',
        client: {
          workflow: {
            start: () => Promise.resolve(),
            getHandle: () => ({ result: () => new Promise((resolve) => (answer = resolve)) }),
          },
        },
      },
    } as unknown as StepToolDeps;
    let beats = 0;
    const attachment = { stepId: 's', kind: 'agent', targetId: 'agt_1' } as unknown as StepAttachmentDoc;
    const ref = { actionChainId: 'c', runId: 'r', startedByUserId: 'u' };
    const tools = await loadStepTools('o', [attachment], ref, 'scope', deps, {
      heartbeat: () => void beats++,
    });
    const done = tools.run({ id: 'c1', name: 'ask_agt_1', arguments: '{"message":"hi"}' });
    // The start and the handle are awaited before the beat begins.
    await new Promise((resolve) => setImmediate(resolve));
    mock.timers.tick(1999);
    expect(beats).to.equal(0);
    mock.timers.tick(1);
    expect(beats).to.equal(1);
    answer('fine');
    expect(await done).to.equal('"fine"');
    mock.timers.tick(4000);
    expect(beats).to.equal(1);
  });

  it("beats the step activity's own heartbeat while its model has not answered", async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    const world = engineWorld([step(1)]);
    let answer: ((value: unknown) => void) | undefined;
    Object.assign(world.deps, {
      llm: { chat: { completions: { create: () => new Promise((resolve) => (answer = resolve)) } } },
    });
    const activities = createChainActivities({
      ...world.deps,
      runs: { createRun: () => Promise.reject(new Error('no')) },
    });
    const env = new MockActivityEnvironment({ attempt: 1 });
    let beats = 0;
    env.on('heartbeat', () => beats++);
    const outcome = await env.run(async () => {
      const done = activities.runChainStep(stepInput(1));
      while (!answer) await new Promise((resolve) => setImmediate(resolve));
      // Ticked inside the activity, whose context the beat reports to.
      mock.timers.tick(3000);
      answer({ model: 'gpt-test', choices: [{ message: { content: 'ok' } }] });
      return done;
    });
    expect(outcome).to.deep.equal({ kind: 'success' });
    expect(beats).to.equal(1);
  });
});
