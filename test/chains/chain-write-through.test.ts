import { expect } from 'chai';
import type {
  ChainElementInput,
  ChainRunInput,
  ChainStepInput,
  ChainStepOutcome,
  UnwrittenStep,
} from '@contracts';
import { chainActivityDeps } from '@activities/index';
import { createChainActivities } from '@activities/chains/runs';
import { WriteThroughRunStore } from '@lib/chains/engine/write-through-run-store';
import { createRunnableChain, obj, str, userText } from '@test/helpers/chains';
import { runActivity } from '@test/helpers/chain-steps';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';

/**
 * The chain-step engine with its plain run store (WriteThroughRunStore: every step reads the run, every result
 * is written before the step returns) against the write-behind one the worker uses. The steps run as activities
 * outside a workflow, driven as chainRunWorkflow and chainFanOutWorkflow drive them.
 */
describe('chain runs through the write-through run store', () => {
  let env: TestEnv;
  let org: TestOrg;
  before(async () => {
    env = await testEnv();
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Write Through Org');
  });

  type Store = 'write-behind' | 'write-through';
  const activities = (store: Store) =>
    createChainActivities(
      chainActivityDeps(env.deps, env.deps.logger),
      store === 'write-through' ? new WriteThroughRunStore(env.deps.repos) : undefined,
    );
  const runs = () => env.deps.repos.tenant(org.organizationId).chainRuns;

  async function plannedRun(actionChainId: string, payload: Record<string, unknown>) {
    const { input } = await env.deps.services.chainRuns.createRun(org.organizationId, {
      actionChainId,
      payload,
      triggerType: 'api',
      startedByUserId: org.chat.userId,
    });
    const { plan, ...execution } = input as ChainRunInput & { plan: { steps: Array<{ stepId: string }> } };
    return { execution, stepIds: plan.steps.map((s) => s.stepId) };
  }

  /**
   * Runs a planned execution's steps as its workflow would (results handed on, fan-out elements one by one);
   * `afterStep` sees each step's outcome as its activity returned it.
   */
  async function drive(
    store: Store,
    run: Awaited<ReturnType<typeof plannedRun>>,
    afterStep: (stepId: string, outcome: ChainStepOutcome) => Promise<void> = () => Promise.resolve(),
  ) {
    const a = activities(store);
    const { execution, stepIds } = run;
    let previous: UnwrittenStep | undefined;
    for (const [i, stepId] of stepIds.entries()) {
      const stepInput: ChainStepInput = {
        ...execution,
        stepId,
        handsOnResults: true,
        ...(i === stepIds.length - 1 ? { finishesRun: true } : {}),
        ...(previous ? { previous } : {}),
      };
      let outcome = await runActivity(
        (input: ChainStepInput) => a.runChainStep(input),
        i === 0 ? { ...stepInput, marksRunning: true } : stepInput,
      );
      if (outcome.kind === 'fan-out') {
        const slice = { ...execution, stepId, from: 0, to: outcome.elements, concurrency: 1 };
        for (const index of await runActivity((i: typeof slice) => a.pendingChainElements(i), slice))
          await runActivity((i: ChainElementInput) => a.runChainElement(i), { ...slice, index });
        outcome = await runActivity((i: ChainStepInput) => a.collectChainFanOut(i), stepInput);
      }
      await afterStep(stepId, outcome);
      expect(outcome.kind, JSON.stringify(outcome)).to.not.equal('failed');
      previous = 'unwritten' in outcome ? outcome.unwritten : undefined;
    }
    return (await runs().get(execution.runId))!;
  }

  /** What a user sees of a run: its status, state and each step's result. */
  const seen = (run: Awaited<ReturnType<typeof drive>>) => ({
    status: run.status,
    statusMessage: run.statusMessage,
    state: JSON.parse(run.stateJson) as unknown,
    steps: Object.values(run.stepResults)
      .map(({ stepOrder, name, outcome, detail, modelCalls, generation }) => ({
        stepOrder,
        name,
        outcome,
        detail,
        modelCalls,
        generation,
      }))
      .sort((x, y) => x.stepOrder - y.stepOrder),
  });

  it('runs a chain (a skipped step, a fan-out) to the same results as the write-behind store', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one {{input.who}}', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'never', runIf: 'a == "never"', outputSchema: obj({ z: str }) },
      {
        stepOrder: 3,
        name: 'shout',
        forEachElement: '$.input.words',
        instructions: 'Shout {{element}} (#{{elementIndex}})',
        outputSchema: obj({ loud: str }),
      },
      { stepOrder: 4, name: 'join', instructions: 'join {{a}}: {{#each loud}}{{this}} {{/each}}' },
    ]);
    chain.answer((body) => {
      const text = userText(body);
      if (text.startsWith('one')) return { content: JSON.stringify({ a: `A(${text})` }) };
      const shout = /^Shout (\w+)/.exec(text);
      if (shout) return { content: JSON.stringify({ loud: shout[1]!.toUpperCase() }) };
      return { content: text.trim() };
    });
    const payload = { who: 'Ada', words: ['hey', 'you'] };

    const handedOn: string[] = [];
    const behind = await drive('write-behind', await plannedRun(chain.chainId, payload), (_, o) => {
      if ('unwritten' in o && o.unwritten) handedOn.push(o.unwritten.stepId);
      return Promise.resolve();
    });
    // The write-behind store did hand a result on: the comparison below is between two different paths.
    expect(handedOn).to.have.length.greaterThan(0);

    const through = await plannedRun(chain.chainId, payload);
    const written = await drive('write-through', through, async (stepId, outcome) => {
      // Nothing is handed on: the result is in the run when the step's activity returns.
      expect(outcome).to.not.have.property('unwritten');
      expect((await runs().get(through.execution.runId))!.stepResults[stepId]).to.include({
        outcome: outcome.kind,
      });
    });

    expect(seen(written)).to.deep.equal(seen(behind));
    expect(seen(written)).to.deep.include({ status: 'success', statusMessage: null });
    expect(seen(written).state).to.deep.equal({
      input: payload,
      a: 'A(one Ada)',
      loud: ['HEY', 'YOU'],
      step4: 'join A(one Ada): HEY YOU',
    });
    expect(seen(written).steps.map((s) => [s.name, s.outcome, s.modelCalls])).to.deep.equal([
      ['one', 'success', 1],
      ['never', 'skipped', 0],
      ['shout', 'success', 2],
      ['join', 'success', 1],
    ]);
    // Each store asked the model once per step and element: 1 + 2 + 1.
    expect(chain.calls()).to.have.length(8);
  });

  it("reads every step afresh: another writer's change is seen at once, the step asked once", async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'two', instructions: 'two {{a}} {{other}}', outputSchema: obj({ b: str }) },
    ]);
    chain.answer((body) => {
      const text = userText(body);
      return { content: JSON.stringify(text.startsWith('one') ? { a: 'A' } : { b: `B(${text})` }) };
    });
    const run = await plannedRun(chain.chainId, {});
    const done = await drive('write-through', run, async (stepId) => {
      if (stepId !== run.stepIds[0]) return;
      // Another writer (a worker of another execution, an operator) moves the state on between the steps.
      const now = (await runs().get(run.execution.runId))!;
      const state = { ...(JSON.parse(now.stateJson) as object), other: 'O' };
      const result = { ...now.stepResults[stepId]!, detail: 'written elsewhere' };
      expect(await runs().recordStep(now._id, now.generation, result, JSON.stringify(state))).to.equal(true);
    });
    expect(done.status).to.equal('success');
    expect(JSON.parse(done.stateJson)).to.deep.equal({ input: {}, a: 'A', other: 'O', b: 'B(two A O)' });
    expect(chain.calls().map(userText)).to.deep.equal(['one', 'two A O']);
  });
});
