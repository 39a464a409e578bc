import { expect } from 'chai';
import { startFaultStack, type FaultStack, type StackServer } from '@test/helpers/fault-stack';
import { expectUnavailable, faultWorld, type FaultWorld } from '@test/helpers/fault-world';
import { appHtml } from '@test/helpers/artifacts';
import { steadyLoad } from '@test/helpers/steady-load';
import { eventually } from '@test/helpers/wait';

// Issue 35, part 2: a dependency that hangs (SIGSTOP: a partition, a stuck disk, a long GC pause) is frozen for
// 30 s, one at a time (Temporal, the database, Redis, the object store, the model server), under a steady load of
// turns, chain runs, webhook deliveries and uploads. While it is frozen, a request that needs it answers 503 with
// Retry-After by its deadline (docs/operations.md) and the rest keep answering; after SIGCONT, every piece of work
// the API accepted ends exactly once. The stack is this file's own, object store and Redis included.

/** How long each dependency stays frozen. */
const FROZEN_MS = 30_000;
/** A probe still unanswered after this long waits on a call without a deadline: the test fails. */
const PROBE_BOUND_MS = 90_000;

const pause = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

describe('a frozen dependency under a steady load (SIGSTOP for 30 s, one at a time)', () => {
  let faults: FaultStack | undefined;
  before(async function () {
    this.timeout(300_000);
    faults = await startFaultStack('freeze', { ownStores: true, portShift: 75 });
    faults.startWorker();
    await faults.startApi();
  });
  after(async function () {
    this.timeout(120_000);
    await faults?.close();
  });

  it('answers 503 by the deadline for what needs it, serves the rest, and ends all accepted work once', async function () {
    this.timeout(1_500_000);
    const stack = faults!;
    const world: FaultWorld = await faultWorld(stack);
    const { org, owner, postTurn, accepted } = world;
    const load = steadyLoad(world);
    const healthy = () => eventually(async () => (await stack.health())?.status === 200, 120_000);
    /** /healthz names the frozen dependency (its own probes stop after 3 s). */
    const failing = async (name: string) =>
      expect((await stack.health())?.body.failing).to.deep.equal([name]);
    const acceptedTurn = async (message: string) => {
      const res = await postTurn(message);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      accepted.turns.push({ message, conversationId: res.body.conversationId });
    };

    /** Freezes `server` for FROZEN_MS under the load; `probes` must all answer while it is still frozen. */
    const frozen = async (server: StackServer | 'model', probes: () => Promise<void>) => {
      load.phase = `frozen-${server}`;
      stack.freeze(server);
      const thawAt = Date.now() + FROZEN_MS;
      try {
        await Promise.race([
          probes(),
          pause(PROBE_BOUND_MS).then(() => {
            throw new Error(`a request waited ${PROBE_BOUND_MS} ms on the frozen ${server}: no deadline`);
          }),
        ]);
        await pause(thawAt - Date.now());
      } finally {
        stack.thaw(server);
      }
      load.phase = `after-${server}`;
      await healthy();
    };

    const underLoad = async () => {
      await pause(10_000); // the load under way before the first freeze

      await frozen('temporal', async () => {
        // A refused turn's start may reach Temporal once it thaws: sent again below, it still runs once.
        expectUnavailable(await postTurn('refused-frozen-temporal'));
        await owner.get(org.path()).expect(200);
        await failing('temporal');
      });
      await acceptedTurn('refused-frozen-temporal');

      await frozen('mongo-h2', async () => {
        expectUnavailable(await owner.get(org.path()));
        await failing('mongo');
      });

      // Without Redis, every caller goes on without it: credentials from the database, admission uncounted.
      await frozen('redis', async () => {
        await owner.get(org.path()).expect(200);
        await acceptedTurn('during-frozen-redis');
        await failing('redis');
      });

      await frozen('seaweedfs', async () => {
        const res = await owner.post(org.path('/artifacts'), {
          name: 'Report',
          contentType: 'text/html',
          content: appHtml(null),
        });
        expectUnavailable(res);
        expect(res.body.error.message).to.include('object store');
        await owner.get(org.path()).expect(200);
        await acceptedTurn('during-frozen-s3');
        await failing('s3');
      });

      // The model server is called only by the worker: turns are accepted and answered once it thaws.
      await frozen('model', async () => {
        await owner.get(org.path()).expect(200);
        await acceptedTurn('during-frozen-model');
      });

      await pause(10_000);
      await load.stop();
      // Work was submitted while each dependency was frozen.
      const tags = [
        ...accepted.turns.map((t) => t.message),
        ...accepted.events,
        ...accepted.runs,
        ...world.refusedRuns,
      ];
      for (const server of ['temporal', 'mongo-h2', 'redis', 'seaweedfs', 'model'])
        expect(
          tags.filter((t) => t.startsWith(`frozen-${server}-`)),
          server,
        ).not.to.be.empty;
    };
    try {
      await underLoad();
    } catch (err) {
      load.abandon();
      throw err;
    }
    await world.expectEachOnce();
  });
});
