import { randomBytes } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { expect } from 'chai';
import request from 'supertest';
import { WORKFLOWS, workflowIds } from '@contracts';
import { createActivities } from '@activities/index';
import { createScheduleActivities } from '@activities/schedules';
import { admissionKey } from '@lib/admission/admission';
import type { AdmissionKind } from '@lib/admission/kinds';
import { reconcileAdmission } from '@lib/admission/reconcile';
import { createLogger } from '@lib/logger';
import { admissionSinks } from '@worker/admission-sink';
import { interactiveTaskQueue } from '@lib/temporal/client';
import { createTestAgent } from '@test/helpers/agents';
import { createRunnableChain } from '@test/helpers/chains';
import { createMessageWebhook } from '@test/helpers/webhooks';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { lastUserText } from '@test/helpers/llm';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { startTestWorker, workflowBundle } from '@test/helpers/worker';

const silent = createLogger('silent');

/**
 * Admission (docs/admission.md): each organization's unfinished background work is bounded per kind; beyond it
 * intake answers 429 `backlog_full` with Retry-After and writes nothing, while other organizations go on. Most
 * tests run with no worker polling, so what was admitted stays unfinished until a test starts one.
 */
describe('Admission of background work', function () {
  this.timeout(240_000);
  let env: TestEnv;

  const orgs: TestOrg[] = [];
  before(async () => {
    env = await testEnv();
  });
  // What these tests left unfinished on the shared queue must not run under later suites' workers.
  after(async () => {
    for (const org of orgs) {
      const query = `OrganizationId = '${org.organizationId}' AND ExecutionStatus = 'Running'`;
      for await (const run of env.deps.temporal.client.workflow.list({ query }))
        await env.deps.temporal.client.workflow.getHandle(run.workflowId).terminate('test ended');
    }
  });
  const newOrg = async (name: string) => {
    const org = await createTestOrg(env, name);
    orgs.push(org);
    return org;
  };

  const admission = () => env.deps.services.admission;
  const unfinished = async (org: TestOrg, kind: AdmissionKind) =>
    (await admission().usage(org.organizationId))[kind].unfinished;

  const webhookWithChain = (org: TestOrg) => createMessageWebhook(env, org);

  const deliver = (org: TestOrg, webhookId: string, text: string) =>
    request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .send({ text });

  const runsOf = async (org: TestOrg, chainId: string) =>
    (
      await as(env, org.owner.token)
        .get(org.path(`/chains/${chainId}/runs`))
        .expect(200)
    ).body.items as Array<{
      status: string;
      state: { input: { message?: string } };
    }>;

  it('refuses deliveries beyond the bound with 429 backlog_full and Retry-After, accepts another organization’s meanwhile, and frees slots as executions end', async () => {
    const busy = await newOrg('Busy Org');
    const quiet = await newOrg('Quiet Org');
    const [hookA, hookB] = await Promise.all([webhookWithChain(busy), webhookWithChain(quiet)]);
    await admission().setLimit(busy.organizationId, 'webhook_deliveries', 2);

    await deliver(busy, hookA.webhookId, 'a1').expect(200);
    await deliver(busy, hookA.webhookId, 'a2').expect(200);
    const refused = await deliver(busy, hookA.webhookId, 'a3').expect(429);
    expect(refused.body.error.code).to.equal('backlog_full');
    expect(refused.body.error.message).to.include('2 webhook deliveries unfinished');
    expect(refused.headers['retry-after']).to.equal(String(env.config.admission.retryAfterSeconds));
    expect(await unfinished(busy, 'webhook_deliveries')).to.equal(2);
    // A full backlog is refused before the webhook is looked up (a sender hammering it costs one Redis read):
    // the answer says the organization is busy and nothing about the webhook.
    const unknownHook = await deliver(busy, 'whk_000000000000000000000000', 'a4').expect(429);
    expect(unknownHook.body.error.code).to.equal('backlog_full');
    // The other organization is not held by the first one's bound, and a missing webhook there is still 404.
    await deliver(quiet, hookB.webhookId, 'b1').expect(200);
    await deliver(quiet, 'whk_000000000000000000000000', 'b2').expect(404);

    hookA.chain.answer({ content: '{"ok": true}' });
    hookB.chain.answer({ content: '{"ok": true}' });
    const worker = await startTestWorker(env);
    try {
      await eventually(async () => {
        const runs = await runsOf(quiet, hookB.chain.chainId);
        return runs.length === 1 && runs[0]!.status === 'success';
      }, 120_000);
      // The refused delivery started nothing: A ran exactly its two accepted deliveries.
      await eventually(async () => {
        const runs = await runsOf(busy, hookA.chain.chainId);
        return runs.length === 2 && runs.every((r) => r.status === 'success') && runs;
      }, 120_000);
      expect(
        (await runsOf(busy, hookA.chain.chainId)).map((r) => r.state.input.message).sort(),
      ).to.deep.equal(['a1', 'a2']);
      // Each execution that ended gave its slot back: the bound has room again.
      await eventually(
        async () =>
          (await unfinished(busy, 'webhook_deliveries')) === 0 &&
          (await unfinished(busy, 'chain_runs')) === 0,
        60_000,
      );
      await deliver(busy, hookA.webhookId, 'a3').expect(200);
    } finally {
      await worker.stop();
    }
  });

  it('bounds chain runs a person starts, and deliveries that would start more, while another organization runs', async () => {
    const busy = await newOrg('Busy Org');
    const quiet = await newOrg('Quiet Org');
    const { chain, webhookId } = await webhookWithChain(busy);
    await admission().setLimit(busy.organizationId, 'chain_runs', 1);
    const run = (org: TestOrg, chainId: string, message: string) =>
      as(env, org.chat.token).post(org.path(`/chains/${chainId}/run`), { payload: { message } });

    await run(busy, chain.chainId, 'first').expect(202);
    const refused = await run(busy, chain.chainId, 'second').expect(429);
    expect(refused.body.error.code).to.equal('backlog_full');
    expect(refused.body.error.message).to.include('1 chain runs unfinished');
    expect(refused.headers['retry-after']).to.equal(String(env.config.admission.retryAfterSeconds));
    // Nothing was written for the refused run.
    expect((await runsOf(busy, chain.chainId)).map((r) => r.state.input.message)).to.deep.equal(['first']);
    // A delivery would start a chain run: it is refused too, and counts nothing.
    const delivery = await deliver(busy, webhookId, 'third').expect(429);
    expect(delivery.body.error.code).to.equal('backlog_full');
    expect(await unfinished(busy, 'webhook_deliveries')).to.equal(0);

    const other = await webhookWithChain(quiet);
    await run(quiet, other.chain.chainId, 'theirs').expect(202);
    expect(await unfinished(quiet, 'chain_runs')).to.equal(1);

    // Operators read it in the API's metrics: what was refused, and the backlog with its oldest age.
    const metrics = await env.deps.metrics.registry.metrics();
    const series = (name: string, kind: string) =>
      new RegExp(
        `^${name}\\{[^}]*organization_id="${busy.organizationId}",kind="${kind}"[^}]*\\} (\\S+)$`,
        'm',
      ).exec(metrics)?.[1];
    expect(series('admission_refused_total', 'chain_runs')).to.equal('2');
    expect(series('admission_admitted_total', 'chain_runs')).to.equal('1');
    expect(series('admission_backlog', 'chain_runs')).to.equal('1');
    expect(Number(series('admission_oldest_age_seconds', 'chain_runs'))).to.be.greaterThan(0);

    // Back to the default bound (an operator's `cli admission set … --limit default`): room again.
    await admission().setLimit(busy.organizationId, 'chain_runs', null);
    await run(busy, chain.chainId, 'second').expect(202);
  });

  it('records a schedule fire beyond the bound as skipped, with the bound that was full', async () => {
    const org = await newOrg('Scheduled Org');
    const chain = await createRunnableChain(env, org, [{ stepOrder: 1, instructions: 'Report' }]);
    const schedule = await as(env, org.owner.token)
      .post(org.path('/schedules'), { name: 'Nightly', cronExpression: '0 2 * * *' })
      .expect(201);
    const triggerId = schedule.body.triggerId as string;
    await as(env, org.owner.token)
      .post(org.path(`/schedules/${triggerId}/handlers`), {
        handlerType: 'action-chain',
        actionChainId: chain.chainId,
        instructions: 'Report',
      })
      .expect(201);
    const fires = createScheduleActivities({
      repos: env.deps.repos,
      admission: admission(),
      sync: env.deps.services.scheduleSync,
      logger: silent,
    });
    const fire = (firedAt: string) =>
      fires.admitScheduleFire({
        organizationId: org.organizationId,
        triggerId,
        fireId: `${workflowIds.scheduleFire(org.organizationId, triggerId)}-${firedAt}`,
        firedAt,
      });

    expect(await fire('2026-01-01T02:00:00Z')).to.equal(true);
    await admission().setLimit(org.organizationId, 'chain_runs', 1);
    await as(env, org.chat.token)
      .post(org.path(`/chains/${chain.chainId}/run`), {})
      .expect(202);
    expect(await fire('2026-01-02T02:00:00Z')).to.equal(false);

    const runs = await as(env, org.owner.token)
      .get(org.path(`/schedules/${triggerId}/runs`))
      .expect(200);
    expect(runs.body.lastRun.status).to.equal('skipped');
    expect(runs.body.lastRun.statusMessage).to.equal(
      'skipped: the organization had 1 chain runs unfinished, its bound; this fire ran no handler',
    );
    expect(runs.body.lastRun.endedAt).to.be.a('string');
  });

  it('frees the slots of executions that ended unreported, and keeps those still running (reconciled from visibility)', async () => {
    const org = await newOrg('Crashed Org');
    const { webhookId } = await webhookWithChain(org);
    await deliver(org, webhookId, 'still waiting').expect(200);
    const key = admissionKey(org.organizationId, 'webhook_deliveries');
    const [running] = await env.deps.redis.zrange(key, 0, -1);
    // An execution that never reported its end (say its worker died): counted, but not running anywhere.
    const lost = workflowIds.webhookDelivery(
      org.organizationId,
      webhookId,
      `whd_${randomBytes(6).toString('hex')}`,
    );
    await admission().record(org.organizationId, 'webhook_deliveries', lost);
    expect(await unfinished(org, 'webhook_deliveries')).to.equal(2);
    // The running delivery must be visible as running before a sweep may judge it.
    await eventually(async () => {
      const { count } = await env.deps.temporal.client.workflow.count(
        `OrganizationId = '${org.organizationId}' AND ExecutionStatus = 'Running'`,
      );
      return count === 1;
    });

    await reconcileAdmission(env.deps.redis, env.deps.temporal, silent, { graceMs: 0 });
    expect(await env.deps.redis.zrange(key, 0, -1)).to.deep.equal([running]);
    // Recent ones are left alone (their start may not be visible yet).
    await admission().record(org.organizationId, 'webhook_deliveries', lost);
    await reconcileAdmission(env.deps.redis, env.deps.temporal, silent);
    expect(await unfinished(org, 'webhook_deliveries')).to.equal(2);
  });

  it('counts an execution admit() let in once, and not in place of another; a start that finds it started gives it back', async () => {
    const org = await newOrg('Counted Once Org');
    const key = admissionKey(org.organizationId, 'chain_runs');
    const counted = async () => (await env.deps.redis.zrange(key, 0, -1)).sort();
    const started = () => Promise.resolve({ alreadyStarted: false });
    const a = await admission().admit(org.organizationId, 'chain_runs', 'wf-a');
    await admission().startCounted(org.organizationId, 'chain_runs', 'wf-a', started, a);
    expect(await counted()).to.deep.equal(['wf-a']);
    // The slot of another execution does not count this one.
    const c = await admission().admit(org.organizationId, 'chain_runs', 'wf-c');
    await admission().startCounted(org.organizationId, 'chain_runs', 'wf-b', started, c);
    expect(await counted()).to.deep.equal(['wf-a', 'wf-b', 'wf-c']);
    const d = await admission().admit(org.organizationId, 'chain_runs', 'wf-d');
    await admission().startCounted(
      org.organizationId,
      'chain_runs',
      'wf-d',
      () => Promise.resolve({ alreadyStarted: true }),
      d,
    );
    expect(await counted()).to.deep.equal(['wf-a', 'wf-b', 'wf-c']);
  });

  it('answers a turn from the interactive queue while background work waits, each keyed for fairness by organization', async () => {
    const busy = await newOrg('Busy Org');
    const quiet = await newOrg('Quiet Org');
    const { webhookId } = await webhookWithChain(busy);
    const delivered = await deliver(busy, webhookId, 'waiting').expect(200);
    expect(delivered.status).to.equal(200);
    const { agentId, model } = await createTestAgent(env, quiet.organizationId);
    env.llm.on({ model }, (body) => ({ content: `Answered: ${lastUserText(body)}` }));

    // Only the interactive queue is polled: background work (the delivery) waits, the turn does not.
    const connection = await NativeConnection.connect({ address: env.config.temporal.address });
    const worker = await Worker.create({
      connection,
      namespace: env.config.temporal.namespace,
      taskQueue: interactiveTaskQueue(env.config.temporal.taskQueue),
      workflowBundle: await workflowBundle(),
      activities: createActivities(env.deps),
      sinks: admissionSinks(admission()),
    });
    const running = worker.run();
    try {
      const res = await as(env, quiet.owner.token)
        .post(quiet.path('/conversations'), { agentId, message: 'hello' })
        .expect(201);
      const conversationId = res.body.conversationId as string;
      await eventually(async () => {
        const conv = await as(env, quiet.owner.token).get(quiet.path(`/conversations/${conversationId}`));
        return (conv.body.messages as Array<{ role: string; content: Array<{ text: string }> }>).some(
          (m) => m.role === 'assistant' && m.content[0]?.text === 'Answered: hello',
        );
      }, 120_000);
      const turnId = await eventually(async () => {
        const query = `WorkflowType = '${WORKFLOWS.turn}' AND OrganizationId = '${quiet.organizationId}'`;
        for await (const turn of env.deps.temporal.client.workflow.list({ query })) return turn.workflowId;
        return undefined;
      });
      const turn = await env.deps.temporal.client.workflow.getHandle(turnId).describe();
      expect(turn.taskQueue).to.equal(interactiveTaskQueue(env.config.temporal.taskQueue));
      expect(turn.raw.workflowExecutionInfo?.priority?.fairnessKey).to.equal(quiet.organizationId);
      // The delivery is still waiting on the background queue, keyed by its own organization.
      const [deliveryId] = await env.deps.redis.zrange(
        admissionKey(busy.organizationId, 'webhook_deliveries'),
        0,
        0,
      );
      const delivery = await env.deps.temporal.client.workflow.getHandle(deliveryId!).describe();
      expect(delivery.status.name).to.equal('RUNNING');
      expect(delivery.taskQueue).to.equal(env.config.temporal.taskQueue);
      expect(delivery.raw.workflowExecutionInfo?.priority?.fairnessKey).to.equal(busy.organizationId);
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  });
});
