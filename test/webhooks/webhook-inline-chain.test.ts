import { expect } from 'chai';
import request from 'supertest';
import { WorkflowNotFoundError } from '@temporalio/client';
import { workflowIds } from '@contracts';
import { createTriggerHandlerActivities } from '@activities/triggers/handlers';
import { createWebhookActivities } from '@activities/triggers/webhooks';
import { createLogger } from '@lib/logger';
import { TriggerHandlers } from '@lib/triggers/trigger-handlers';
import { webhookPlan } from '@lib/webhooks/delivery-plan';
import { createRunnableChain, finished, getRun, obj, startRun, str, userText } from '@test/helpers/chains';
import { recordHistory } from '@test/helpers/histories';
import { as, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { useWorkerAndOrg } from '@test/helpers/worker';
import type { TestEnv } from '@test/helpers/env';

/*
 * docs/webhooks.md: a delivery to a webhook whose only handler runs a chain runs that chain's first execution in
 * the delivery's own workflow (one workflow per delivery, not two). Everything a run started on its own does
 * still holds: it succeeds once, is listed with the chain's runs, and a re-run that supersedes it cancels it.
 */
describe('webhook deliveries: the chain of a webhook with one handler runs in the delivery workflow', function () {
  this.timeout(300_000);
  const suite = useWorkerAndOrg('Webhook Inline Chain Org');

  async function webhookFor(env: TestEnv, org: TestOrg, actionChainId: string) {
    const webhook = await as(env, org.owner.token)
      .post(org.path('/webhooks'), { name: 'One handler' })
      .expect(201);
    const webhookId = webhook.body.webhookId as string;
    const handler = await as(env, org.owner.token)
      .post(org.path(`/webhooks/${webhookId}/handlers`), {
        handlerType: 'action-chain',
        actionChainId,
        instructions: 'Handle it',
      })
      .expect(201);
    return { webhookId, handlerId: handler.body.handlerId as string };
  }

  async function deliver(env: TestEnv, org: TestOrg, webhookId: string, body: object) {
    await request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .send(body)
      .expect(200, {});
    // The delivery's workflow writes the log.
    const deliveryId = await eventually(async () => {
      const log = await as(env, org.admin.token)
        .get(org.path(`/webhooks/${webhookId}/deliveries`))
        .expect(200);
      return log.body.items[0]?.deliveryId as string | undefined;
    }, 120_000);
    return { deliveryId, workflowId: workflowIds.webhookDelivery(org.organizationId, webhookId, deliveryId) };
  }

  /** The run's first execution never had a workflow of its own. */
  async function noOwnWorkflow(env: TestEnv, org: TestOrg, runId: string) {
    const described = await env.deps.temporal.client.workflow
      .getHandle(workflowIds.chainRun(org.organizationId, runId, 1))
      .describe()
      .catch((err: unknown) => err);
    expect(described).to.be.instanceOf(WorkflowNotFoundError);
  }

  async function onlyRun(env: TestEnv, org: TestOrg, chainId: string) {
    return eventually(async () => {
      const res = await as(env, org.owner.token)
        .get(org.path(`/chains/${chainId}/runs`))
        .expect(200);
      return res.body.items.length === 1 && (res.body.items[0].runId as string);
    }, 120_000);
  }

  it('runs the steps in the delivery workflow, starts no chain-run workflow, and records the run once', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one {{input.text}}', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'two', instructions: 'two {{a}}', outputSchema: obj({ b: str }) },
    ]);
    chain.answer((body) => ({ content: userText(body).startsWith('one') ? '{"a":"A"}' : '{"b":"B"}' }));
    const { webhookId } = await webhookFor(env, org, chain.chainId);
    const { deliveryId, workflowId } = await deliver(env, org, webhookId, { text: 'hello' });

    const delivery = env.deps.temporal.client.workflow.getHandle(workflowId);
    expect(await delivery.result()).to.deep.equal({ handlers: 1 });
    const runId = await onlyRun(env, org, chain.chainId);
    const run = await getRun(env, org, chain.chainId, runId);
    expect(run).to.deep.include({ status: 'success', triggerType: 'webhook', generation: 1 });
    expect(run.state).to.deep.equal({ input: { text: 'hello' }, a: 'A', b: 'B' });
    expect(chain.calls()).to.have.length(2);

    // Its steps ran as the delivery workflow's activities; no workflow of the run's own was started.
    const history = await delivery.fetchHistory();
    const scheduled = (history.events ?? []).flatMap((e) =>
      e.activityTaskScheduledEventAttributes
        ? [e.activityTaskScheduledEventAttributes.activityType?.name]
        : [],
    );
    expect(scheduled).to.deep.equal(['runChainStep', 'runChainStep']);
    await noOwnWorkflow(env, org, runId);

    const detail = await as(env, org.admin.token)
      .get(org.path(`/webhooks/${webhookId}/deliveries/${deliveryId}`))
      .expect(200);
    expect(detail.body).to.deep.include({ status: 'dispatched', handlers: 1 });
    expect(detail.body.handlerRuns).to.have.length(1);
    expect(detail.body.handlerRuns[0]).to.deep.include({ runId, status: 'success' });
    await recordHistory(env, workflowId, 'webhook-delivery-inline-chain');
  });

  it('cancels the delivery workflow when a re-run with resetToRunning supersedes its execution', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'slow', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'then', instructions: 'Then', outputSchema: obj({ b: str }) },
    ]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let firstCalls = 0;
    const off = chain.answer(async (body) => {
      if (userText(body).includes('Then')) return { content: '{"b":"done"}' };
      firstCalls++;
      if (firstCalls === 1) await gate; // the delivery's execution, held in its first step
      return { content: `{"a":"${firstCalls === 1 ? 'superseded' : 'rerun'}"}` };
    });
    try {
      const { webhookId } = await webhookFor(env, org, chain.chainId);
      const { workflowId } = await deliver(env, org, webhookId, { text: 'slow' });
      await eventually(() => firstCalls === 1, 120_000);
      const runId = await onlyRun(env, org, chain.chainId);

      await startRun(env, org, chain.chainId, { runId }, '?resetToRunning=true');
      const closed = await eventually(async () => {
        const status = (await env.deps.temporal.client.workflow.getHandle(workflowId).describe()).status.name;
        return status === 'RUNNING' ? undefined : status;
      }, 120_000);
      expect(closed).to.equal('CANCELLED');

      const done = await finished(env, org, chain.chainId, runId);
      expect(done).to.deep.include({ status: 'success', generation: 2 });
      expect(done.state).to.deep.include({ a: 'rerun', b: 'done' });
      // The cancelled execution never reached step 2.
      expect(chain.calls().filter((b) => userText(b).includes('Then'))).to.have.length(1);
    } finally {
      release();
      off();
    }
  });

  it('gives the execution again to the workflow that lost the answer, and to no other workflow', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'one', instructions: 'one', outputSchema: obj({ a: str }) },
    ]);
    const { webhookId, handlerId } = await webhookFor(env, org, chain.chainId);
    // A delivery as its workflow records it before its handler runs; no workflow runs it in this test.
    const deliveryId = 'whd_lost_answer';
    await env.deps.repos.tenant(org.organizationId).webhooks.recordDelivery(deliveryId, {
      webhookId,
      eventId: null,
      receivedAt: new Date(),
      requestJson: JSON.stringify({
        body: { text: 'lost' },
        headers: {},
        method: 'POST',
        path: `/orgs/${org.organizationId}/webhooks/${webhookId}/execute`,
        queryParams: {},
        pathParams: { webhookId },
      }),
    });
    const workflowId = workflowIds.webhookDelivery(org.organizationId, webhookId, deliveryId);
    const triggers = {
      repos: env.deps.repos,
      conversations: env.deps.services.conversations,
      chainRuns: env.deps.services.chainRuns,
      members: env.deps.services.users,
      logger: createLogger('silent'),
      plans: { schedule: () => Promise.resolve(null), webhook: webhookPlan(env.deps.repos) },
    };
    const activities = {
      ...createTriggerHandlerActivities(triggers),
      ...createWebhookActivities({
        deliveries: env.deps.services.webhookDeliveries,
        handlers: new TriggerHandlers(triggers),
      }),
    };
    const input = {
      organizationId: org.organizationId,
      source: 'webhook' as const,
      parentId: webhookId,
      eventKey: deliveryId,
      handlerId,
    };
    const [step] = await env.deps.repos.tenant(org.organizationId).chains.listSteps(chain.chainId);
    const first = await activities.dispatchOnlyWebhookHandler(input, workflowId);
    const runId = await onlyRun(env, org, chain.chainId);
    const expected = {
      status: 'started',
      runId,
      execution: {
        organizationId: org.organizationId,
        runId,
        generation: 1,
        actionChainId: chain.chainId,
        plan: { steps: [{ stepId: step!._id, stepOrder: 1, name: 'one' }] },
      },
    };
    expect(first).to.deep.equal(expected);
    const detail = await as(env, org.admin.token)
      .get(org.path(`/webhooks/${webhookId}/deliveries/${deliveryId}`))
      .expect(200);
    expect(detail.body).to.deep.include({ status: 'dispatched', handlers: 1 });
    // The activity again, as after a worker that stopped before the workflow recorded its answer.
    expect(await activities.dispatchOnlyWebhookHandler(input, workflowId)).to.deep.equal(expected);
    // Another workflow is not given the run, nor is a caller that starts runs in their own workflows.
    expect(await activities.dispatchOnlyWebhookHandler(input, `${workflowId}-other`)).to.deep.equal({
      status: 'started',
      runId,
    });
    expect(await activities.runTriggerHandler(input)).to.deep.equal({ status: 'started', runId });
    const runs = await as(env, org.owner.token)
      .get(org.path(`/chains/${chain.chainId}/runs`))
      .expect(200);
    expect(runs.body.items.map((r: { status: string }) => r.status)).to.deep.equal(['pending']);
    await noOwnWorkflow(env, org, runId);
  });
});
