import { expect } from 'chai';
import type { ChainStepInput } from '@contracts';
import { createActivities } from '@activities/index';
import type { CreditsService } from '@lib/credits/credits.service';
import { createRunnableChain, obj } from '@test/helpers/chains';
import { plannedExecution, runActivity, within } from '@test/helpers/chain-steps';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';

/**
 * A chain step pays for its model call without waiting for the payment (two writes); the execution's next step
 * and its end wait for it. The steps run here as activities outside a workflow, with the
 * organization's payments held back until the test lets them through.
 */
describe('chain step payments', () => {
  let env: TestEnv;
  let org: TestOrg;
  before(async () => {
    env = await testEnv();
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Step Payments Org');
  });

  /** The chain activities, with every payment of the first step held until `release()`. */
  function activitiesHoldingFirstPayment(firstStepId: string) {
    const real = env.deps.services.credits;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const credits = {
      balance: (id: string) => real.balance(id),
      requireCredits: (id: string) => real.requireCredits(id),
      recordUsage: async (...args: Parameters<CreditsService['recordUsage']>) => {
        if (args[1].reference === firstStepId) await gate;
        return real.recordUsage(...args);
      },
    } as CreditsService;
    const activities = createActivities({ ...env.deps, services: { ...env.deps.services, credits } });
    return {
      step: (input: ChainStepInput) => runActivity((i: ChainStepInput) => activities.runChainStep(i), input),
      release,
    };
  }

  async function twoStepRun(secondStep: Record<string, unknown> = {}) {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'first', outputSchema: obj({ a: { type: 'string' } }) },
      { stepOrder: 2, name: 'second', outputSchema: obj({ b: { type: 'string' } }), ...secondStep },
    ]);
    chain.answer({ content: '{"a":"1","b":"2"}' });
    const { execution, stepIds } = await plannedExecution(env, org, chain.chainId);
    const [first, second] = stepIds as [string, string];
    return { chain, execution, first, second };
  }

  const usageRecords = async () => (await env.deps.services.credits.summary(org.organizationId)).recentUsage;

  it('ends a run only once its earlier steps are paid for', async () => {
    // The last step is skipped: it asks no model, so nothing but the run's end waits for the first payment.
    const { execution, first, second } = await twoStepRun({ runIf: 'a == "never"' });
    const steps = activitiesHoldingFirstPayment(first);
    const before = await env.deps.services.credits.balance(org.organizationId);

    // The first step returns with its payment held back: no usage recorded, nothing debited yet.
    expect(await steps.step({ ...execution, stepId: first, marksRunning: true })).to.deep.equal({
      kind: 'success',
    });
    expect(await usageRecords()).to.have.length(0);
    expect(await env.deps.services.credits.balance(org.organizationId)).to.equal(before);

    let ended = false;
    const last = steps.step({ ...execution, stepId: second, finishesRun: true });
    void last.finally(() => (ended = true));
    expect(await within(env, org, execution.runId, 200, () => ended)).to.equal(false);
    const waiting = (await env.deps.repos.tenant(org.organizationId).chainRuns.get(execution.runId))!;
    expect(waiting.status).to.equal('running');
    expect(waiting.stepResults[second]?.outcome).to.equal('skipped');

    steps.release();
    expect(await last).to.deep.equal({ kind: 'skipped' });
    expect((await env.deps.repos.tenant(org.organizationId).chainRuns.get(execution.runId))!.status).to.equal(
      'success',
    );
    const [usage, ...more] = await usageRecords();
    expect(more).to.have.length(0);
    expect(usage!.reference).to.equal(first);
    expect(await env.deps.services.credits.balance(org.organizationId)).to.equal(before - usage!.cost);
  });

  it("checks the next step's credits against the balance the last payment left", async () => {
    const { chain, execution, first, second } = await twoStepRun();
    const { credits } = env.deps.services;
    // One credit left: the first call uses it up.
    await credits.grant(org.organizationId, 1 - (await credits.balance(org.organizationId)), 'one left');
    const steps = activitiesHoldingFirstPayment(first);
    expect(await steps.step({ ...execution, stepId: first, marksRunning: true })).to.deep.equal({
      kind: 'success',
    });

    // While the first payment is held, the next step must not ask the model on the balance from before it.
    const next = steps.step({ ...execution, stepId: second, finishesRun: true });
    next.catch(() => undefined);
    expect(await within(env, org, execution.runId, 200, () => chain.calls().length > 1)).to.equal(false);

    steps.release();
    const err = await next.then(
      () => expect.fail('the step ran without credits'),
      (e: unknown) => e as Error,
    );
    expect(err.message).to.equal("the organization's credits are used up; an operator can grant more");
    expect(chain.calls()).to.have.length(1);
    expect(await credits.balance(org.organizationId)).to.be.at.most(0);
  });
});
