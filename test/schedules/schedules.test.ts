import { expect } from 'chai';
import { workflowIds } from '@contracts';
import type { TestEnv } from '@test/helpers/env';
import { createTestAgent } from '@test/helpers/agents';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { YEARLY, useScheduleSuite } from '@test/schedules/schedule-suite';

describe('schedules: triggers, handlers and their Temporal Schedules', function () {
  this.timeout(120_000);
  const { suite, admin, createChain, createSchedule } = useScheduleSuite();
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  before(async () => {
    other = await createTestOrg(suite.env, 'Other Schedules Org');
  });
  beforeEach(() => {
    ({ env, org } = suite);
  });

  const describeSchedule = (organizationId: string, triggerId: string) =>
    env.deps.temporal.client.schedule.getHandle(workflowIds.schedule(organizationId, triggerId)).describe();

  it('creates, lists, reads, changes in place and deletes triggers with their Temporal Schedules', async () => {
    const created = await createSchedule({ description: 'Every new year' });
    expect(created).to.include({
      organizationId: org.organizationId,
      name: 'Digest',
      description: 'Every new year',
      cronExpression: YEARLY,
      confirmHighFrequency: false,
      creatorUserId: org.admin.userId,
    });
    const schedule = await describeSchedule(org.organizationId, created.triggerId);
    expect(schedule.info.nextActionTimes[0]!.toISOString()).to.match(/-01-01T00:00:00.000Z$/);
    expect(schedule.policies.overlap).to.equal('BUFFER_ONE');
    expect(schedule.policies.catchupWindow).to.equal(10 * 60 * 1000);
    // every fire carries its organization and trigger as search attributes (docs/operations.md "Search attributes")
    const typed = schedule.action.typedSearchAttributes;
    const attributes = Array.isArray(typed) ? typed : (typed?.getAll() ?? []);
    expect(attributes.map(({ key, value }) => [key.name, value])).to.have.deep.members([
      ['OrganizationId', org.organizationId],
      ['TriggerId', created.triggerId],
    ]);

    await admin()
      .post(org.path('/schedules'), { name: 'Second', cronExpression: '30 7 * * 1-5' })
      .expect(201);
    const list = await admin().get(org.path('/schedules?limit=1')).expect(200);
    expect(list.body).to.include({ totalRows: 2, offset: 0 });
    expect(list.body.items.map((t: { triggerId: string }) => t.triggerId)).to.deep.equal([created.triggerId]);

    const updated = await admin()
      .put(org.path(`/schedules/${created.triggerId}`), { name: 'Noon', cronExpression: '0 12 * * *' })
      .expect(200);
    expect(updated.body).to.include({
      name: 'Noon',
      cronExpression: '0 12 * * *',
      description: 'Every new year',
    });
    const changed = await describeSchedule(org.organizationId, created.triggerId);
    expect(changed.info.nextActionTimes[0]!.toISOString()).to.match(/T12:00:00.000Z$/);
    expect(changed.state.note).to.equal('revision 2');

    await admin()
      .delete(org.path(`/schedules/${created.triggerId}`))
      .expect(200, { success: true });
    await admin()
      .get(org.path(`/schedules/${created.triggerId}`))
      .expect(404);
    await describeSchedule(org.organizationId, created.triggerId).then(
      () => expect.fail('the Temporal Schedule should be deleted'),
      (err: Error) => expect(err.name).to.equal('ScheduleNotFoundError'),
    );
    expect((await admin().get(org.path('/schedules')).expect(200)).body.totalRows).to.equal(1);
  });

  it('refuses a bad cron naming the field, and firing more often than every 15 minutes unless confirmed', async () => {
    const refuse = async (cronExpression: string, field: string) => {
      const res = await admin().post(org.path('/schedules'), { name: 'Bad', cronExpression }).expect(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.message, cronExpression).to.contain(field);
    };
    await refuse('61 * * * *', 'minute');
    await refuse('0 24 * * *', 'hour');
    await refuse('0 0 0 * *', 'day-of-month');
    await refuse('0 0 1 13 *', 'month');
    await refuse('0 0 * * 7', 'day-of-week');
    await refuse('0 0 * * MON', 'day-of-week');
    await refuse('0 0 * *', 'five fields');
    await refuse('0 0 * * * *', 'five fields');
    await refuse('0 0 31 2 *', 'never fires');
    await refuse('*/5 * * * *', '5 minutes apart');
    // a stepped number runs to the end of the range: 0/5 is every five minutes, not minute 0 alone
    await refuse('0/5 * * * *', '5 minutes apart');
    await refuse('0,10 * * * *', '10 minutes apart');
    // a gap across midnight counts too: 23:59 and 00:00 are a minute apart
    await refuse('0,59 0,23 * * *', '1 minute apart');
    await createSchedule({ cronExpression: '*/15 * * * *' });
    const fast = await createSchedule({ cronExpression: '*/5 * * * *', confirmHighFrequency: true });
    expect(fast).to.include({ cronExpression: '*/5 * * * *', confirmHighFrequency: true });
    // an update is checked the same way
    const res = await admin()
      .put(org.path(`/schedules/${fast.triggerId}`), { name: 'Fast', cronExpression: '*/5 * * * *' })
      .expect(400);
    expect(res.body.error.message).to.contain('confirmHighFrequency');
  });

  it("stores an expression's fields one space apart and an omitted description as empty; an unknown trigger or handler is not found", async () => {
    const created = await createSchedule({ cronExpression: ' 0  12 * *\t* ' });
    expect(created).to.include({ cronExpression: '0 12 * * *', description: '' });
    for (const method of ['get', 'delete'] as const) {
      const trigger = await admin()[method](org.path('/schedules/sch_nope')).expect(404);
      expect(trigger.body.error.message).to.equal('schedule not found');
      const handler = await admin()
        [method](org.path(`/schedules/${created.triggerId}/handlers/shd_nope`))
        .expect(404);
      expect(handler.body.error.message).to.equal('schedule handler not found');
    }
  });

  it("PUT keeps omitted optional fields: a schedule's description and a handler's inputMapping; null clears it", async () => {
    const { triggerId } = await createSchedule({ description: 'Kept' });
    const put = await admin()
      .put(org.path(`/schedules/${triggerId}`), { name: 'Renamed', cronExpression: YEARLY })
      .expect(200);
    expect(put.body).to.include({ name: 'Renamed', description: 'Kept' });
    const chainId = await createChain();
    const base = org.path(`/schedules/${triggerId}/handlers`);
    const target = { handlerType: 'action-chain', actionChainId: chainId };
    const created = await admin()
      .post(base, { ...target, instructions: 'Run', inputMapping: { team: 'support' } })
      .expect(201);
    const path = `${base}/${created.body.handlerId}`;
    const kept = await admin()
      .put(path, { ...target, instructions: 'Run again' })
      .expect(200);
    expect(kept.body).to.deep.include({ instructions: 'Run again', inputMapping: { team: 'support' } });
    const cleared = await admin()
      .put(path, { ...target, instructions: 'Run', inputMapping: null })
      .expect(200);
    expect(cleared.body.inputMapping).to.equal(null);
  });

  it('answers the runs summary of a trigger that never ran', async () => {
    const { triggerId } = await createSchedule({ cronExpression: '0 9 * * *' });
    const res = await admin()
      .get(org.path(`/schedules/${triggerId}/runs`))
      .expect(200);
    expect(res.body.lastRun).to.equal(null);
    expect(res.body.hasUntrackedWorkflowRuns).to.equal(false);
    const next = new Date(res.body.nextRun as string);
    expect(next.toISOString()).to.match(/T09:00:00.000Z$/);
    expect(next.getTime()).to.be.greaterThan(Date.now());
  });

  it('is for admins and owners only', async () => {
    const { triggerId } = await createSchedule();
    await as(env, org.chat.token).get(org.path('/schedules')).expect(403);
    await as(env, org.chat.token)
      .post(org.path('/schedules'), { name: 'x', cronExpression: YEARLY })
      .expect(403);
    await as(env, org.chat.token)
      .get(org.path(`/schedules/${triggerId}/runs`))
      .expect(403);
    await as(env, org.owner.token)
      .get(org.path(`/schedules/${triggerId}`))
      .expect(200);
    await as(env, org.apiKey)
      .get(org.path(`/schedules/${triggerId}/handlers`))
      .expect(200);
  });

  it("never shows or changes another organization's schedules, nor runs its chains or agents", async () => {
    const { triggerId } = await createSchedule();
    const chainId = await createChain();
    const handler = await admin()
      .post(org.path(`/schedules/${triggerId}/handlers`), {
        handlerType: 'workflow',
        workflowId: chainId,
        instructions: 'x',
      })
      .expect(201);
    const handlerId = handler.body.handlerId as string;
    const stranger = as(env, other.admin.token);
    await stranger.get(other.path(`/schedules/${triggerId}`)).expect(404);
    await stranger
      .put(other.path(`/schedules/${triggerId}`), { name: 'x', cronExpression: YEARLY })
      .expect(404);
    await stranger.delete(other.path(`/schedules/${triggerId}`)).expect(404);
    await stranger.get(other.path(`/schedules/${triggerId}/runs`)).expect(404);
    await stranger.get(other.path(`/schedules/${triggerId}/handlers`)).expect(404);
    await stranger.get(other.path(`/schedules/${triggerId}/handlers/${handlerId}`)).expect(404);
    await stranger
      .put(other.path(`/schedules/${triggerId}/handlers/${handlerId}`), {
        handlerType: 'workflow',
        workflowId: chainId,
        instructions: 'y',
      })
      .expect(404);
    await stranger.delete(other.path(`/schedules/${triggerId}/handlers/${handlerId}`)).expect(404);
    expect(
      (await stranger.get(other.path(`/schedules?workflowId=${chainId}`)).expect(200)).body.items,
    ).to.deep.equal([]);
    await stranger.get(org.path(`/schedules/${triggerId}`)).expect(401);
    // their own trigger cannot run our chain or our agent
    const theirs = await stranger
      .post(other.path('/schedules'), { name: 'Theirs', cronExpression: YEARLY })
      .expect(201);
    const { agentId } = await createTestAgent(env, org.organizationId);
    await as(env, org.owner.token)
      .post(org.path(`/schedules/${triggerId}/handlers`), {
        handlerType: 'agent',
        agentId,
        instructions: 'x',
      })
      .expect(201);
    const theirHandlers = other.path(`/schedules/${theirs.body.triggerId}/handlers`);
    await stranger
      .post(theirHandlers, { handlerType: 'workflow', workflowId: chainId, instructions: 'x' })
      .expect(invalidReference('workflowId'));
    await as(env, other.owner.token)
      .post(theirHandlers, { handlerType: 'agent', agentId, instructions: 'x' })
      .expect(invalidReference('agentId'));
    // and nothing of ours changed
    expect(
      (
        await admin()
          .get(org.path(`/schedules/${triggerId}/handlers/${handlerId}`))
          .expect(200)
      ).body.instructions,
    ).to.equal('x');
  });
});
