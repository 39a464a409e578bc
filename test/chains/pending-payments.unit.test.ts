import { expect } from 'chai';
import { PendingPayments } from '@lib/chains/engine/billing';
import type { ExecutionSnapshot } from '@lib/chains/engine/execution-snapshot';
import { StepFailed } from '@lib/chains/engine/errors';
import { engineWorld, ORG, runnerOf, step, stepInput } from './engine-world';

const execution = { organizationId: ORG, runId: 'run_1', generation: 1 };
const turn = () => new Promise((resolve) => setImmediate(resolve));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

// lib/chains/engine/billing.ts: the payments an execution's steps did not wait for are kept until they are done,
// so that its next step and its end, on this worker, can wait for all of them.
describe("an execution's payments under way (engine, in memory)", () => {
  it('waits for every payment still under way, also once an earlier one is done', async () => {
    const pending = new PendingPayments();
    const first = deferred();
    const second = deferred();
    pending.add(execution, first.promise);
    pending.add(execution, second.promise);
    first.resolve();
    await turn();
    let settled = false;
    void pending.settled(execution).then(() => (settled = true));
    await turn();
    expect(settled).to.equal(false);
    second.resolve();
    await pending.settled(execution);
    // A payment added after the others were done is waited for as well.
    const third = deferred();
    pending.add(execution, third.promise);
    let again = false;
    void pending.settled(execution).then(() => (again = true));
    await turn();
    expect(again).to.equal(false);
    third.resolve();
    await pending.settled(execution);
  });

  it('reads the balance at once for a step without a copy, not after the payments under way', async () => {
    // "the balance is read at once": a step that reads afresh does not wait for the payment of the one before.
    const world = engineWorld([step(1), step(2)], { balance: 1 });
    world.credits.slowPayments = true;
    const { billing } = runnerOf(world);
    const usage = [{ model: 'gpt-test', promptTokens: 1, completionTokens: 1 }];
    billing.billLater(stepInput(1), usage, {} as ExecutionSnapshot);
    const err = await billing.creditCheck(stepInput(2)).catch((e: unknown) => e);
    expect(err).to.equal(undefined);
    await billing.settled(stepInput(2));
    expect(world.credits.balanceNow).to.equal(0);
    // With the payment done, the next read refuses.
    expect(await billing.creditCheck(stepInput(2)).catch((e: unknown) => e)).to.be.instanceOf(StepFailed);
  });
});
