import { expect } from 'chai';
import { FanOutRunner } from '@lib/chains/engine/fan-out';
import { attempt, engineWorld, runnerOf, step, stepInput, type Step } from './engine-world';

const askAgent = { toolCalls: [{ id: 'c1', name: 'ask_agt_1', arguments: '{"message":"hi"}' }] };

/** A world whose step 1 has agent agt_1 attached, with the Temporal client its calls start child workflows on. */
function agentWorld(
  fields: Partial<Step>,
  replies: Array<{ content?: string } | typeof askAgent>,
  state?: object,
) {
  const world = engineWorld([step(1, fields), step(2)], { replies, state });
  world.tenant.chainAttachments.listForChain = () =>
    Promise.resolve([{ stepId: 'stp_1', kind: 'agent', targetId: 'agt_1' }]);
  const started: string[] = [];
  Object.assign(world.deps, {
    agents: { getMany: () => Promise.resolve([{ agentId: 'agt_1', name: 'A', description: 'd' }]) },
    temporal: {
      taskQueue: 'q',
      client: {
        workflow: {
          start: (_wf: string, opts: { workflowId: string }) => {
            started.push(opts.workflowId);
            return Promise.resolve();
          },
          getHandle: (id: string) => ({ result: () => Promise.resolve(`answer of ${id}`) }),
        },
      },
    },
  });
  return { world, started };
}

/** What the tool answered, as the model's next request carries it. */
const toolAnswers = (request: Record<string, unknown>) =>
  (request.messages as Array<{ role: string; content: string }>)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content);

// docs/chains.md "Attachments" and lib/chains/engine/step-tools.ts: an attached agent answers in its own child
// workflow, whose id derives from the execution, the step and the call (and a fan-out element's index), so a
// retried step finds the same answer and two elements' calls never share one.
describe("the scope of a chain step's tool calls (engine, in memory)", () => {
  it("starts a step's agent call under the execution and the step", async () => {
    const { world, started } = agentWorld({}, [askAgent, { content: 'done' }]);
    expect(await runnerOf(world).runChainStep(stepInput(1), attempt())).to.deep.equal({ kind: 'success' });
    expect(started).to.deep.equal(['agent-call-chain-run-org_1-run_1-1-stp_1-c1']);
    expect(toolAnswers(world.model.requests[1]!)).to.deep.equal([
      '"answer of agent-call-chain-run-org_1-run_1-1-stp_1-c1"',
    ]);
  });

  it("runs a fan-out element's tool calls, under the element's index", async () => {
    const { world, started } = agentWorld({ forEachElement: '$.input.xs' }, [askAgent, { content: 'done' }], {
      input: { xs: ['a', 'b'] },
    });
    const steps = runnerOf(world);
    expect((await steps.runChainStep(stepInput(1), attempt())).kind).to.equal('fan-out');
    await new FanOutRunner(world.deps, steps).runElement({ ...stepInput(1), index: 1 }, attempt());
    expect(started).to.deep.equal(['agent-call-chain-run-org_1-run_1-1-stp_1-1-c1']);
    expect(toolAnswers(world.model.requests[1]!)).to.deep.equal([
      '"answer of agent-call-chain-run-org_1-run_1-1-stp_1-1-c1"',
    ]);
  });
});
