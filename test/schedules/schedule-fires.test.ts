import { expect } from 'chai';
import { ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { workflowIds } from '@contracts';
import { createApp } from '@api/app';
import { createScheduleActivities } from '@activities/schedules';
import type { Config } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { ensureScheduleReconciler } from '@lib/schedules/reconciler-schedule';
import request from 'supertest';
import { createTestAgent } from '@test/helpers/agents';
import { createRunnableChain } from '@test/helpers/chains';
import { recordHistory } from '@test/helpers/histories';
import { as, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { startTestWorker, useWorkerAndOrg } from '@test/helpers/worker';
import type { TestEnv } from '@test/helpers/env';

// Fires once a year: a test fires it on purpose, by backfilling (nominal times in the past) or triggering it.
const YEARLY = '0 0 1 1 *';
const at = (iso: string) => new Date(iso);
const silent = createLogger('silent');

interface RunsSummary {
  nextRun: string | null;
  lastRun: {
    handlerId: string;
    handlerType: string;
    runId: string | null;
    status: string;
    startedAt: string;
    endedAt: string | null;
  } | null;
  hasUntrackedWorkflowRuns: boolean;
}

describe('schedules firing: every handler once per fire, the runs summary, the reconciler', function () {
  this.timeout(240_000);
  const suite = useWorkerAndOrg('Schedule Fires Org');

  const scheduleHandle = (env: TestEnv, org: TestOrg, triggerId: string) =>
    env.deps.temporal.client.schedule.getHandle(workflowIds.schedule(org.organizationId, triggerId));
  const fireId = (org: TestOrg, triggerId: string, time: string) =>
    `${workflowIds.scheduleFire(org.organizationId, triggerId)}-${time}`;

  /** A trigger with an action-chain handler, a workflow handler (same chain) and an agent handler. */
  async function triggerWithHandlers() {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        instructions: 'Report for {{input.team}} at {{input.currentTimestamp}}',
        inputSchema: {
          type: 'object',
          properties: { team: { type: 'string' }, currentTimestamp: { type: 'string' } },
          required: ['team', 'currentTimestamp'],
        },
        outputSchema: { type: 'object', properties: { done: { type: 'boolean' } }, required: ['done'] },
      },
    ]);
    chain.answer({ content: '{"done": true}' });
    const { agentId } = await createTestAgent(env, org.organizationId);
    const trigger = await as(env, org.owner.token)
      .post(org.path('/schedules'), { name: 'Yearly report', cronExpression: YEARLY })
      .expect(201);
    const triggerId = trigger.body.triggerId as string;
    const handlers = org.path(`/schedules/${triggerId}/handlers`);
    const owner = as(env, org.owner.token);
    const ids = [
      (
        await owner
          .post(handlers, {
            handlerType: 'action-chain',
            actionChainId: chain.chainId,
            instructions: 'Run the report',
            inputMapping: { team: 'support' },
          })
          .expect(201)
      ).body.handlerId as string,
      (
        await owner
          .post(handlers, {
            handlerType: 'workflow',
            workflowId: chain.chainId,
            instructions: 'Run it as a workflow',
            inputMapping: { team: 'sales', currentTimestamp: 'given' },
          })
          .expect(201)
      ).body.handlerId as string,
      (
        await owner
          .post(handlers, { handlerType: 'agent', agentId, instructions: 'Write the yearly note' })
          .expect(201)
      ).body.handlerId as string,
    ];
    return { chain, agentId, triggerId, handlerIds: ids };
  }

  async function chainRuns(chainId: string) {
    const { env, org } = suite;
    const res = await as(env, org.owner.token)
      .get(org.path(`/chains/${chainId}/runs?limit=100`))
      .expect(200);
    return res.body.items as Array<{
      runId: string;
      status: string;
      triggerType: string;
      state: { input: Record<string, string> };
    }>;
  }

  async function conversations(agentId: string) {
    const { env, org } = suite;
    const res = await as(env, org.owner.token)
      .get(org.path(`/conversations?agentId=${agentId}&limit=100`))
      .expect(200);
    return res.body.items as Array<{ conversationId: string; title: string }>;
  }

  /** Waits until the Schedule has taken `n` actions and none is running. */
  async function actionsTaken(triggerId: string, n: number) {
    const { env, org } = suite;
    await eventually(async () => {
      const d = await scheduleHandle(env, org, triggerId).describe();
      return d.info.numActionsTaken >= n && d.info.runningActions.length === 0;
    }, 120_000);
  }

  it('runs every handler once per fire, and never again when a fire is repeated or overlaps', async () => {
    const { env, org } = suite;
    const { chain, agentId, triggerId, handlerIds } = await triggerWithHandlers();
    // another trigger's handler, which these fires must not start
    const owner = as(env, org.owner.token);
    const other = await owner
      .post(org.path('/schedules'), { name: 'Other', cronExpression: YEARLY })
      .expect(201);
    await owner
      .post(org.path(`/schedules/${other.body.triggerId}/handlers`), {
        handlerType: 'workflow',
        workflowId: chain.chainId,
        instructions: 'Not this one',
      })
      .expect(201);
    const handle = scheduleHandle(env, org, triggerId);
    // two fires: new year 2020 and 2021
    await handle.backfill({
      start: at('2019-12-31T23:00:00Z'),
      end: at('2021-01-01T01:00:00Z'),
      overlap: ScheduleOverlapPolicy.ALLOW_ALL,
    });
    await actionsTaken(triggerId, 2);
    const runs = await eventually(async () => {
      const all = await chainRuns(chain.chainId);
      return all.length === 4 && all.every((r) => r.status === 'success') && all;
    }, 120_000);
    expect(runs.every((r) => r.triggerType === 'schedule')).to.equal(true);
    const inputs = runs.map((r) => `${r.state.input.team} ${r.state.input.currentTimestamp}`).sort();
    // currentTimestamp is the fire's scheduled time unless the mapping sets it
    expect(inputs).to.deep.equal([
      'sales given',
      'sales given',
      'support 2020-01-01T00:00:00Z',
      'support 2021-01-01T00:00:00Z',
    ]);
    const conversationsAfter = await eventually(async () => {
      const list = await conversations(agentId);
      return list.length === 2 && list;
    });
    expect(conversationsAfter.map((c) => c.title).sort()).to.deep.equal([
      'Yearly report (2020-01-01T00:00:00Z)',
      'Yearly report (2021-01-01T00:00:00Z)',
    ]);
    const fire2020 = fireId(org, triggerId, '2020-01-01T00:00:00Z');
    expect(await env.deps.temporal.client.workflow.getHandle(fire2020).result()).to.deep.equal({
      handlers: 3,
    });
    await recordHistory(env, fire2020, 'schedule-fire');
    await recordHistory(env, workflowIds.triggerHandler(fire2020, handlerIds[0]!), 'trigger-handler-chain');
    await recordHistory(env, workflowIds.triggerHandler(fire2020, handlerIds[2]!), 'trigger-handler-agent');

    // the same fires again (a retried fire): they run, and start nothing
    await handle.backfill({
      start: at('2019-12-31T23:00:00Z'),
      end: at('2021-01-01T01:00:00Z'),
      overlap: ScheduleOverlapPolicy.ALLOW_ALL,
    });
    await actionsTaken(triggerId, 4);
    expect(await env.deps.temporal.client.workflow.getHandle(fire2020).result()).to.deep.equal({
      handlers: 0,
    });
    // two overlapping fires of 2022 at once: one fire's worth of runs
    const fire2022 = { start: at('2021-12-31T23:00:00Z'), end: at('2022-01-01T01:00:00Z') };
    await Promise.all([
      handle.backfill({ ...fire2022, overlap: ScheduleOverlapPolicy.ALLOW_ALL }),
      handle.backfill({ ...fire2022, overlap: ScheduleOverlapPolicy.ALLOW_ALL }),
    ]);
    await eventually(async () => (await chainRuns(chain.chainId)).length === 6, 120_000);
    await eventually(async () => (await conversations(agentId)).length === 3, 120_000);
    await actionsTaken(triggerId, 5);
    // settled: nothing more arrives
    const records = await env.deps.repos
      .tenant(org.organizationId)
      .handlerRuns.forEvent(triggerId, '2022-01-01T00:00:00Z');
    expect(records).to.have.length(3);
    expect(await chainRuns(chain.chainId)).to.have.length(6);
    expect(await conversations(agentId)).to.have.length(3);
  });

  it('runs every handler once for each fire asked now, two asked in the same second included', async () => {
    const { env, org } = suite;
    const { chain, agentId, triggerId } = await triggerWithHandlers();
    // Asked together, both land in one second (the name Temporal gives a Schedule's fire): through the Schedule
    // the second was dropped while the first ran, or ran again under its id and started nothing.
    const fire = () => env.deps.services.scheduleSync.fireNow(org.organizationId, triggerId);
    expect(await Promise.all([fire(), fire()])).to.deep.equal([{ triggerId }, { triggerId }]);
    const runs = await eventually(async () => {
      const all = await chainRuns(chain.chainId);
      return all.length === 4 && all.every((r) => r.status === 'success') && all;
    }, 120_000);
    const support = runs
      .filter((r) => r.state.input.team === 'support')
      .map((r) => r.state.input.currentTimestamp);
    // currentTimestamp: the time each fire was asked, to the millisecond
    expect(support).to.have.length(2);
    expect(new Set(support).size).to.equal(2);
    for (const t of support) expect(t).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    await eventually(async () => (await conversations(agentId)).length === 2, 120_000);
    // settled: each fire's handlers once, nothing more
    for (const t of support) {
      const records = await env.deps.repos.tenant(org.organizationId).handlerRuns.forEvent(triggerId, t!);
      expect(records).to.have.length(3);
    }
    expect(await chainRuns(chain.chainId)).to.have.length(4);
    expect((await scheduleHandle(env, org, triggerId).describe()).info.numActionsTaken).to.equal(0);
  });

  it('reports the most recent run with its status, and a fire no worker has taken yet as untracked', async () => {
    const { env, org } = suite;
    // An API whose schedules start their fires on a task queue no worker serves yet.
    const config: Config = {
      ...env.config,
      temporal: { ...env.config.temporal, taskQueue: `${env.config.temporal.taskQueue}-later` },
    };
    const deps = await createDeps(config, { logger: silent });
    const app = createApp(deps);
    const api = (path: string) => request(app).get(path).set('Authorization', `Bearer ${org.owner.token}`);
    let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
    try {
      const chain = await createRunnableChain(env, org, [{ stepOrder: 1, instructions: 'Go' }]);
      chain.answer({ content: 'done' });
      const trigger = await request(app)
        .post(org.path('/schedules'))
        .set('Authorization', `Bearer ${org.owner.token}`)
        .send({ name: 'Later', cronExpression: YEARLY })
        .expect(201);
      const triggerId = trigger.body.triggerId as string;
      const handler = await request(app)
        .post(org.path(`/schedules/${triggerId}/handlers`))
        .set('Authorization', `Bearer ${org.owner.token}`)
        .send({ handlerType: 'workflow', workflowId: chain.chainId, instructions: 'Go' })
        .expect(201);
      await deps.temporal.client.schedule
        .getHandle(workflowIds.schedule(org.organizationId, triggerId))
        .trigger();
      const waiting = await eventually(async () => {
        const res = await api(org.path(`/schedules/${triggerId}/runs`)).expect(200);
        const summary = res.body as RunsSummary;
        return summary.hasUntrackedWorkflowRuns && summary;
      });
      expect(waiting.lastRun).to.equal(null);
      expect(waiting.nextRun).to.match(/-01-01T00:00:00.000Z$/);

      worker = await startTestWorker({ config });
      const done = await eventually(async () => {
        const res = await api(org.path(`/schedules/${triggerId}/runs`)).expect(200);
        const summary = res.body as RunsSummary;
        return summary.lastRun?.status === 'success' && !summary.hasUntrackedWorkflowRuns && summary;
      }, 120_000);
      const [run] = await chainRuns(chain.chainId);
      expect(done.lastRun).to.include({
        handlerId: handler.body.handlerId,
        handlerType: 'workflow',
        runId: run!.runId,
        status: 'success',
      });
      expect(new Date(done.lastRun!.endedAt!).getTime()).to.be.at.least(
        new Date(done.lastRun!.startedAt).getTime(),
      );
    } finally {
      await worker?.stop();
      await closeDeps(deps);
    }
  });

  it('keeps record and Temporal Schedule consistent when the Temporal write fails: the reconciler applies it', async () => {
    const { env, org } = suite;
    // An API that cannot reach Temporal: the record is written, the Schedule is not.
    const deps = await createDeps(
      { ...env.config, temporal: { ...env.config.temporal, address: '127.0.0.1:1' } },
      { logger: silent },
    );
    const app = createApp(deps);
    const owner = (method: 'get' | 'post' | 'put' | 'delete', path: string) =>
      request(app)[method](path).set('Authorization', `Bearer ${org.owner.token}`);
    const reconcile = () =>
      createScheduleActivities({
        repos: env.deps.repos,
        admission: env.deps.services.admission,
        sync: env.deps.services.scheduleSync,
        logger: silent,
      }).reconcileSchedules({ olderThanMs: 0 });
    try {
      const created = await owner('post', org.path('/schedules'))
        .send({ name: 'Unsynced', cronExpression: '0 6 * * *' })
        .expect(201);
      const triggerId = created.body.triggerId as string;
      const handle = scheduleHandle(env, org, triggerId);
      await handle.describe().then(
        () => expect.fail('no Schedule yet'),
        (err: unknown) => expect(err).to.be.instanceOf(ScheduleNotFoundError),
      );
      const triggers = env.deps.repos.tenant(org.organizationId).scheduleTriggers;
      expect((await triggers.get(triggerId))?.syncPending).to.equal(true);
      // runs summary: with no Schedule yet nothing is running; when Temporal cannot be asked, runs may be untracked
      const runs = org.path(`/schedules/${triggerId}/runs`);
      const unsynced = (await as(env, org.owner.token).get(runs).expect(200)).body as RunsSummary;
      expect(unsynced).to.include({ hasUntrackedWorkflowRuns: false, lastRun: null });
      expect(unsynced.nextRun).to.match(/T06:00:00.000Z$/);
      expect((await owner('get', runs).expect(200)).body.hasUntrackedWorkflowRuns).to.equal(true);
      expect((await reconcile()).synced).to.be.at.least(1);
      // applying a write to Temporal is not a write of the trigger: updatedAt stays the user's
      const read = await as(env, org.owner.token)
        .get(org.path(`/schedules/${triggerId}`))
        .expect(200);
      expect(read.body.updatedAt).to.equal(created.body.updatedAt);
      expect((await handle.describe()).info.nextActionTimes[0]!.toISOString()).to.match(/T06:00:00.000Z$/);
      expect((await triggers.get(triggerId))?.syncPending).to.equal(false);

      // an update that does not reach Temporal
      await owner('put', org.path(`/schedules/${triggerId}`))
        .send({ name: 'Unsynced', cronExpression: '0 18 * * *' })
        .expect(200);
      expect((await handle.describe()).info.nextActionTimes[0]!.toISOString()).to.match(/T06:00:00.000Z$/);
      await reconcile();
      expect((await handle.describe()).info.nextActionTimes[0]!.toISOString()).to.match(/T18:00:00.000Z$/);

      // a delete that does not reach Temporal: gone for readers at once, the Schedule removed by the reconciler
      await owner('delete', org.path(`/schedules/${triggerId}`)).expect(200);
      await as(env, org.owner.token)
        .get(org.path(`/schedules/${triggerId}`))
        .expect(404);
      await handle.describe();
      const listed = await as(env, org.owner.token).get(org.path('/schedules?limit=100')).expect(200);
      expect(listed.body.items.map((t: { triggerId: string }) => t.triggerId)).to.not.include(triggerId);
      expect((await reconcile()).synced).to.be.at.least(1);
      await handle.describe().then(
        () => expect.fail('the Schedule should be gone'),
        (err: unknown) => expect(err).to.be.instanceOf(ScheduleNotFoundError),
      );
      expect(await triggers.getIncludingDeleted(triggerId)).to.equal(null);
    } finally {
      await closeDeps(deps);
    }
  });

  it('runs nothing for a fire of a deleted trigger whose Schedule was left behind, and removes that Schedule', async () => {
    const { env, org } = suite;
    const { chain, triggerId } = await triggerWithHandlers();
    // the delete's Temporal write never happened: the record is a tombstone, the Schedule still fires
    await env.deps.repos.tenant(org.organizationId).scheduleTriggers.markDeleted(triggerId);
    const handle = scheduleHandle(env, org, triggerId);
    await handle.backfill({
      start: at('2019-12-31T23:00:00Z'),
      end: at('2020-01-01T01:00:00Z'),
      overlap: ScheduleOverlapPolicy.ALLOW_ALL,
    });
    const fire = env.deps.temporal.client.workflow.getHandle(fireId(org, triggerId, '2020-01-01T00:00:00Z'));
    expect(await eventually(() => fire.result(), 120_000)).to.deep.equal({ handlers: 0 });
    await handle.describe().then(
      () => expect.fail('the fire should have removed the Schedule'),
      (err: unknown) => expect(err).to.be.instanceOf(ScheduleNotFoundError),
    );
    expect(await chainRuns(chain.chainId)).to.have.length(0);
    expect(
      await env.deps.repos.tenant(org.organizationId).scheduleTriggers.getIncludingDeleted(triggerId),
    ).to.equal(null);
  });

  it('runs the reconciler as a Schedule of its own', async () => {
    const { env } = suite;
    const scheduleId = await ensureScheduleReconciler(env.deps.temporal);
    // a second worker start finds it there
    expect(await ensureScheduleReconciler(env.deps.temporal)).to.equal(scheduleId);
    const handle = env.deps.temporal.client.schedule.getHandle(scheduleId);
    try {
      // every minute, one at a time, a missed minute not caught up later
      const schedule = await handle.describe();
      expect(schedule.spec.intervals?.map((i) => i.every)).to.deep.equal([60_000]);
      expect(schedule.policies).to.include({ overlap: 'SKIP', catchupWindow: 60_000 });
      expect(schedule.action.args).to.deep.equal([]);
      await handle.trigger();
      const recent = await eventually(async () => {
        const d = await handle.describe();
        return d.info.recentActions.length > 0 && d.info.runningActions.length === 0 && d.info.recentActions;
      }, 120_000);
      const workflowId = recent[recent.length - 1]!.action.workflow.workflowId;
      expect(await env.deps.temporal.client.workflow.getHandle(workflowId).result()).to.have.keys(
        'synced',
        'pending',
      );
      await recordHistory(env, workflowId, 'reconcile-schedules');
    } finally {
      await handle.delete();
    }
  });
});
