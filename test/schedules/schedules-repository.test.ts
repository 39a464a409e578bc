import { expect } from 'chai';
import { orgPerTest } from '@test/helpers/org';
import { rawCollection } from '@test/helpers/store';

/*
 * What the schedule repositories keep against the real database that the services' in-memory stand-ins cannot
 * show: a deletion is a new revision, so a sync of the revision before it leaves the trigger pending; a sync
 * of the current revision clears it (again and again), of another revision never; a trigger's handlers come
 * oldest first, ties by id, in the list and in what a fire runs; the reconciler sweeps the longest pending first.
 */
const T1 = new Date('2026-01-01T00:00:01.000Z');
const T2 = new Date('2026-01-01T00:00:02.000Z');
const fields = { name: 'Nightly', description: '', cronExpression: '0 3 * * *', confirmHighFrequency: false };

describe('schedule repositories against the database', function () {
  this.timeout(120_000);
  const world = orgPerTest('Schedule store');
  const repos = () => world.env.deps.repos.tenant(world.org.organizationId);
  const triggerId = (s = '') => `sch_${world.tag}${s}`;

  it('makes a deletion a new revision, which a sync of the revision before leaves pending', async () => {
    const triggers = repos().scheduleTriggers;
    const created = await triggers.create(triggerId(), world.org.admin.userId, fields);
    expect(created.revision).to.equal(1);
    const deleted = await triggers.markDeleted(triggerId());
    // the tombstone as written, not as it was before
    expect(deleted?.revision).to.equal(2);
    expect(deleted?.deletedAt).to.be.instanceOf(Date);
    expect(deleted?.syncPending).to.equal(true);

    expect(await triggers.markSynced(triggerId(), 1)).to.equal(false);
    expect((await triggers.getIncludingDeleted(triggerId()))?.syncPending).to.equal(true);
    expect(await triggers.markSynced(triggerId(), 2)).to.equal(true);
    expect((await triggers.getIncludingDeleted(triggerId()))?.syncPending).to.equal(false);
  });

  it('answers true for a sync of the current revision however often it comes, false for any other', async () => {
    const triggers = repos().scheduleTriggers;
    await triggers.create(triggerId(), world.org.admin.userId, fields);
    expect(await triggers.markSynced(triggerId(), 1)).to.equal(true);
    // nothing left to change: still the revision the Schedule carries
    expect(await triggers.markSynced(triggerId(), 1)).to.equal(true);
    expect(await triggers.markSynced(triggerId(), 3)).to.equal(false);
    expect(await triggers.markSynced(triggerId('missing'), 1)).to.equal(false);
  });

  it("lists a trigger's handlers and runs them oldest first, ties by id, whatever order they were stored in", async () => {
    await repos().scheduleTriggers.create(triggerId(), world.org.admin.userId, fields);
    const [a, b, c] = ['a', 'b', 'c'].map((s) => `shh_${world.tag}_${s}`) as [string, string, string];
    for (const id of [b, c, a])
      await repos().scheduleHandlers.create(id, triggerId(), world.org.admin.userId, {
        handlerType: 'action-chain',
        agentId: null,
        actionChainId: 'chn_order',
        workflowId: null,
        instructions: 'x',
        inputMappingJson: null,
      });
    for (const [id, createdAt] of Object.entries({ [b]: T2, [c]: T1, [a]: T2 }))
      await rawCollection(world.env, 'schedule_handlers').updateOne({ _id: id }, { $set: { createdAt } });
    const page = await repos().scheduleHandlers.list(triggerId(), { limit: 10, offset: 0 });
    expect(page.items.map((h) => h._id)).to.deep.equal([c, a, b]);
    expect((await repos().scheduleHandlers.all(triggerId())).map((h) => h._id)).to.deep.equal([c, a, b]);
  });

  it('sweeps the triggers pending longest first, up to the limit, and only those changed before the cut-off', async () => {
    // dates no other test writes, so the sweep sees only these
    const at = (day: number) => new Date(Date.UTC(1990, 0, day));
    const ids = [triggerId('_newer'), triggerId('_oldest'), triggerId('_later'), triggerId('_synced')];
    for (const id of ids) await repos().scheduleTriggers.create(id, world.org.admin.userId, fields);
    const stored: Record<string, { updatedAt: Date; syncPending: boolean }> = {
      [ids[0]!]: { updatedAt: at(3), syncPending: true },
      [ids[1]!]: { updatedAt: at(1), syncPending: true },
      [ids[2]!]: { updatedAt: at(9), syncPending: true },
      [ids[3]!]: { updatedAt: at(2), syncPending: false },
    };
    const raw = rawCollection(world.env, 'schedule_triggers');
    try {
      for (const [id, set] of Object.entries(stored)) await raw.updateOne({ _id: id }, { $set: set });
      const sweep = (limit: number) =>
        world.env.deps.repos.scheduleSweep.listScheduleTriggersToSyncCrossOrg(at(5), limit);
      expect((await sweep(1)).map((t) => t._id)).to.deep.equal([ids[1]]);
      expect(await sweep(10)).to.deep.equal([
        { _id: ids[1], organizationId: world.org.organizationId },
        { _id: ids[0], organizationId: world.org.organizationId },
      ]);
    } finally {
      // left pending, a later run's sweep of the same dates would find them
      await raw.updateMany({ _id: { $in: ids } }, { $set: { syncPending: false } });
    }
  });
});
