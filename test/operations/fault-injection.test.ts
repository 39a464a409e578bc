import { expect } from 'chai';
import { startFaultStack, type FaultStack } from '@test/helpers/fault-stack';
import { expectUnavailable, faultWorld } from '@test/helpers/fault-world';
import { userText } from '@test/helpers/chains';
import { eventually } from '@test/helpers/wait';

// Issue 16, operations: with turns, ingestions and webhook deliveries in flight, the API, the worker, Temporal and
// the database are killed (SIGKILL) one at a time and started again. Nothing accepted is lost, every run ends,
// and while Temporal or the database is down the API answers 503 with the error body. The test has a stack of
// its own (both on disk), so killing them disturbs no other test file. A dependency that hangs instead
// (SIGSTOP) is freeze.test.ts.

describe('fault injection: the API, the worker, Temporal and the database killed one at a time', () => {
  let stack: FaultStack | undefined;
  before(async function () {
    this.timeout(300_000);
    stack = await startFaultStack('faults');
    // the worker bundles the workflows while the API starts
    stack.startWorker();
    await stack.startApi();
  });
  after(async function () {
    this.timeout(120_000);
    await stack?.close();
  });

  it('loses nothing accepted, ends every run, and answers 503 with the error body while a dependency is down', async function () {
    this.timeout(900_000);
    const faults = stack!;
    const world = await faultWorld(faults);
    const { env, org, owner, postTurn, deliver, submit } = world;
    /** Turns, an ingestion and a webhook delivery, each accepted. */
    const submitWork = async (tag: string) => {
      for (const i of [1, 2]) await submit.turn(`${tag}-${i}`);
      await submit.upload(tag);
      await submit.delivery(tag);
    };
    /** Until a model call for this batch's turns has begun: the kill lands in the middle of work. */
    const inFlight = (tag: string) =>
      eventually(() => env.llm.chatRequests.some((r) => userText(r).startsWith(`${tag}-`)), 120_000);
    const healthy = () => eventually(async () => (await faults.health())?.status === 200, 120_000);

    // 1. The API: what it accepted runs on in the worker; the new API process serves it.
    await submitWork('api');
    await faults.killApi();
    await faults.startApi();
    await healthy();

    // 2. The worker, in the middle of turns: work accepted meanwhile waits for the next worker.
    await submitWork('worker');
    await inFlight('worker');
    await faults.killWorker();
    await submitWork('no-worker');
    faults.startWorker();

    // 3. Temporal. A turn refused while it is down is sent again, with the same requestId, once it is back.
    await submitWork('temporal');
    await inFlight('temporal');
    await faults.kill('temporal');
    expectUnavailable(await postTurn('refused-temporal'));
    expectUnavailable(await deliver('refused-temporal'));
    const temporalDown = await faults.health();
    expect(temporalDown?.status).to.equal(503);
    expect(temporalDown?.body.failing).to.deep.equal(['temporal']);
    // what needs only the database still answers
    await owner.get(org.path()).expect(200);
    await faults.restart('temporal');
    await healthy();
    await submit.turn('refused-temporal');
    await submit.delivery('refused-temporal');

    // 4. The database.
    await submitWork('database');
    await inFlight('database');
    await faults.kill('mongo-h2');
    expectUnavailable(await owner.get(org.path()));
    expectUnavailable(await postTurn('refused-database'));
    expectUnavailable(await deliver('refused-database'));
    const dbDown = await faults.health();
    expect(dbDown?.status).to.equal(503);
    expect(dbDown?.body.failing).to.deep.equal(['mongo']);
    await faults.restart('mongo-h2');
    // Neither the API nor the worker is restarted: both reconnect by themselves.
    await healthy();
    await submitWork('after');

    await world.expectEachOnce();
  });
});
