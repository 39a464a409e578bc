import { ApplicationFailure } from '@temporalio/activity';
import { expect } from 'chai';
import { createChainActivities, type ChainActivityDeps } from '@activities/chains/runs';
import { AppError } from '@lib/errors';
import { engineWorld, ORG, step, type World } from './engine-world';

type CreateRun = ChainActivityDeps['runs']['createRun'];
type Asked = Parameters<CreateRun>[1];

function activitiesOf(world: World, createRun: CreateRun) {
  return createChainActivities({ ...world.deps, runs: { createRun } });
}

const call = (args: string) => ({
  organizationId: ORG,
  agentId: 'agt_1',
  actionChainId: 'chn_1',
  callKey: 'turn-1-call-1',
  arguments: args,
});

/** A createRun that keeps what it was asked and answers with an execution of that run. */
function recording() {
  const asked: Asked[] = [];
  const createRun: CreateRun = (_org, fields) => {
    asked.push(fields);
    return Promise.resolve({
      input: { organizationId: ORG, runId: fields.runId!, generation: 1 },
    }) as ReturnType<CreateRun>;
  };
  return { asked, createRun };
}

const refusal = async (work: Promise<unknown>) => {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(ApplicationFailure);
  const f = err as ApplicationFailure;
  return { type: f.type, message: f.message, nonRetryable: f.nonRetryable };
};

// docs/chains.md "Attachments": attached to an agent, a chain becomes a tool whose parameters are its first step's
// inputSchema; the turn runs it (trigger `agent`) and the model reads its status and state.
describe("an agent's chain tool (chain activities)", () => {
  it('starts a run for the agent with the call arguments as input, the same run for the same call', async () => {
    const { asked, createRun } = recording();
    const activities = activitiesOf(engineWorld([step(1)]), createRun);
    const first = await activities.createAgentChainRun(call('{"message":"hi"}'));
    const again = await activities.createAgentChainRun(call('{"message":"hi"}'));
    const other = await activities.createAgentChainRun({ ...call(''), callKey: 'turn-1-call-2' });
    expect(asked[0]).to.deep.include({
      actionChainId: 'chn_1',
      payload: { message: 'hi' },
      triggerType: 'agent',
      startedByUserId: 'agent:agt_1',
    });
    expect(first.runId).to.be.a('string').and.equal(again.runId);
    expect(other.runId).to.not.equal(first.runId);
    expect(asked[2]!.payload).to.deep.equal({});
  });

  it('refuses arguments that are not a JSON object, for the model to read', async () => {
    const activities = activitiesOf(engineWorld([step(1)]), recording().createRun);
    const notJson = {
      type: 'ToolInputError',
      message: 'the chain input is not valid JSON',
      nonRetryable: true,
    };
    expect(await refusal(activities.createAgentChainRun(call('{oops')))).to.deep.equal(notJson);
    for (const args of ['[1]', 'null', '"text"'])
      expect(await refusal(activities.createAgentChainRun(call(args)))).to.deep.equal({
        type: 'ToolInputError',
        message: 'the chain input must be a JSON object',
        nonRetryable: true,
      });
  });

  it("gives the model a refusal of the run's creation, and lets a server failure be retried", async () => {
    const gone = () => Promise.reject(new AppError(404, 'not_found', 'chain chn_1 not found'));
    expect(
      await refusal(activitiesOf(engineWorld([step(1)]), gone).createAgentChainRun(call('{}'))),
    ).to.deep.equal({
      type: 'ToolInputError',
      message: 'chain chn_1 not found',
      nonRetryable: true,
    });
    const broken = new AppError(500, 'internal', 'boom');
    const failing = activitiesOf(engineWorld([step(1)]), () => Promise.reject(broken));
    expect(await failing.createAgentChainRun(call('{}')).catch((e: unknown) => e)).to.equal(broken);
  });

  it('tells the model how a run ended and its state, or that it was deleted', async () => {
    const world = engineWorld([step(1)], { state: { input: { a: 1 }, step1: 'x' } });
    Object.assign(world.runs.runs.get('run_1')!, {
      status: 'failed',
      statusMessage: 'step 1 (s1) failed: no',
    });
    const activities = activitiesOf(world, recording().createRun);
    const input = { organizationId: ORG, runId: 'run_1', generation: 1 };
    expect(await activities.chainRunOutcome(input)).to.deep.equal({
      runId: 'run_1',
      status: 'failed',
      statusMessage: 'step 1 (s1) failed: no',
      state: { input: { a: 1 }, step1: 'x' },
    });
    world.runs.runs.delete('run_1');
    expect(await activities.chainRunOutcome(input)).to.deep.equal({
      status: 'failed',
      statusMessage: 'the run was deleted',
    });
  });
});
