import { expect } from 'chai';
import request from 'supertest';
import { workflowIds } from '@contracts';
import { createApp } from '@api/app';
import { createTriggerHandlerActivities } from '@activities/triggers/handlers';
import { webhookPlan } from '@lib/webhooks/delivery-plan';
import { ChainRunsService } from '@lib/chains/chain-runs.service';
import type { Config } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { createTemporalClient } from '@lib/temporal/client';
import { createTestAgent } from '@test/helpers/agents';
import { createRunnableChain, userText } from '@test/helpers/chains';
import { recordHistory } from '@test/helpers/histories';
import { as, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { startTestWorker, useWorkerAndOrg } from '@test/helpers/worker';
import type { TestEnv } from '@test/helpers/env';

interface ChainRunItem {
  runId: string;
  status: string;
  triggerType: string;
  state: { input: Record<string, unknown> };
}

const silent = createLogger('silent');

interface DeliveryDetail {
  status: string;
  handlers: number;
  duplicates: number;
  eventId: string | null;
  request: { body: unknown; headers: Record<string, string> };
  handlerRuns: Array<{ status: string; handlerType: string; runId: string }>;
}

describe('webhook deliveries: recorded before the answer, every handler run once', function () {
  this.timeout(300_000);
  const suite = useWorkerAndOrg('Webhook Deliveries Org');

  async function chainRuns(env: TestEnv, org: TestOrg, chainId: string) {
    const res = await as(env, org.owner.token)
      .get(org.path(`/chains/${chainId}/runs?limit=100`))
      .expect(200);
    return res.body.items as ChainRunItem[];
  }

  /** A webhook with a chain handler mapping every source, on the app given. */
  async function webhookWithChain(env: TestEnv, org: TestOrg, app = env.app) {
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        instructions: 'Handle {{input.message}}',
        inputSchema: {
          type: 'object',
          properties: { message: { type: 'string' }, count: { type: 'number' } },
          required: ['message', 'count'],
        },
        outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
    ]);
    chain.answer({ content: '{"ok": true}' });
    const owner = (method: 'post' | 'get', path: string) =>
      request(app)[method](path).set('Authorization', `Bearer ${org.owner.token}`);
    const webhook = await owner('post', org.path('/webhooks')).send({ name: 'CRM events' }).expect(201);
    const webhookId = webhook.body.webhookId as string;
    const handler = await owner('post', org.path(`/webhooks/${webhookId}/handlers`))
      .send({
        handlerType: 'action-chain',
        actionChainId: chain.chainId,
        instructions: 'Handle the event',
        inputMapping: {
          message: '{{body.text}}',
          count: '{{body.count}}',
          source: '{{headers.x-source}}',
          ref: '{{queryParams.ref}}',
          hook: '{{pathParams.webhookId}}',
          line: '{{method}} {{path}} for {{body.customer.name}}',
        },
      })
      .expect(201);
    return { chain, webhookId, handlerId: handler.body.handlerId as string };
  }

  it('maps the delivery from each source, opens an agent conversation, and logs the handler runs', async () => {
    const { env, org } = suite;
    const { chain, webhookId } = await webhookWithChain(env, org);
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { content: 'Noted.' });
    await as(env, org.owner.token)
      .post(org.path(`/webhooks/${webhookId}/handlers`), {
        handlerType: 'agent',
        agentId,
        instructions: 'Tell the account manager',
      })
      .expect(201);
    await request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute?ref=abc`))
      .set('x-source', 'crm')
      .set('authorization', 'Bearer do-not-forward')
      .set('proxy-authorization', 'Basic do-not-forward')
      .set('cookie', 'session=do-not-forward')
      .set('webhook-signature', 'v1,do-not-forward')
      .send({ text: 'customer upgraded', count: 3, customer: { name: 'Ada' } })
      .expect(200, {});
    const [run] = await eventually(async () => {
      const runs = await chainRuns(env, org, chain.chainId);
      return runs.length === 1 && runs[0]!.status === 'success' && runs;
    }, 120_000);
    expect(run!.triggerType).to.equal('webhook');
    expect(run!.state.input).to.deep.equal({
      message: 'customer upgraded',
      count: 3,
      source: 'crm',
      ref: 'abc',
      hook: webhookId,
      line: `POST /orgs/${org.organizationId}/webhooks/${webhookId}/execute for Ada`,
    });
    const prompt = await eventually(() => {
      const call = env.llm.chatRequests.find((b) => b.model === model);
      return call && userText(call);
    });
    expect(prompt)
      .to.contain('Tell the account manager')
      .and.contain('customer upgraded')
      .and.contain('"x-source": "crm"');
    expect(prompt).to.not.contain('do-not-forward');

    const log = await as(env, org.admin.token)
      .get(org.path(`/webhooks/${webhookId}/deliveries`))
      .expect(200);
    expect(log.body.totalRows).to.equal(1);
    const deliveryId = log.body.items[0].deliveryId as string;
    const detail = await eventually(async () => {
      const res = await as(env, org.admin.token)
        .get(org.path(`/webhooks/${webhookId}/deliveries/${deliveryId}`))
        .expect(200);
      const body = res.body as DeliveryDetail;
      return (
        body.status === 'dispatched' &&
        body.handlerRuns.every((r) => r.status === 'success') &&
        body.handlerRuns.length === 2 &&
        body
      );
    }, 120_000);
    expect(detail).to.include({ handlers: 2, duplicates: 0, eventId: null });
    expect(detail.request.body).to.deep.equal({
      text: 'customer upgraded',
      count: 3,
      customer: { name: 'Ada' },
    });
    // docs/webhooks.md: handlers never see credentials or signatures (the stored request is what they are given).
    for (const hidden of ['authorization', 'proxy-authorization', 'cookie', 'webhook-signature'])
      expect(detail.request.headers, hidden).to.not.have.property(hidden);
    expect(detail.request.headers).to.include({ 'x-source': 'crm' });
    const chainRun = detail.handlerRuns.find((r) => r.handlerType === 'action-chain');
    expect(chainRun!.runId).to.equal(run!.runId);
    const deliveryWorkflow = workflowIds.webhookDelivery(org.organizationId, webhookId, deliveryId);
    // webhook-delivery.json was recorded before handlers ran inline (child workflows); this is the shape since.
    await recordHistory(env, deliveryWorkflow, 'webhook-delivery-inline-handlers');
  });

  it('runs a delivery sent again with the same event id once, and counts the duplicate', async () => {
    const { env, org } = suite;
    const { chain, webhookId } = await webhookWithChain(env, org);
    const send = () =>
      request(env.app)
        .post(org.path(`/webhooks/${webhookId}/execute`))
        .set('Idempotency-Key', 'evt_42')
        .send({ text: 'once', count: 1 })
        .expect(200, {});
    await send();
    await eventually(
      async () => (await chainRuns(env, org, chain.chainId))[0]?.status === 'success',
      120_000,
    );
    await send();
    await send();
    const log = await as(env, org.admin.token)
      .get(org.path(`/webhooks/${webhookId}/deliveries`))
      .expect(200);
    expect(log.body.totalRows).to.equal(1);
    expect(log.body.items[0]).to.include({
      eventId: 'evt_42',
      duplicates: 2,
      handlers: 1,
      status: 'dispatched',
    });
    // another event id is another delivery
    await request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .set('Idempotency-Key', 'evt_43')
      .send({ text: 'twice', count: 2 })
      .expect(200, {});
    await eventually(async () => (await chainRuns(env, org, chain.chainId)).length === 2, 120_000);
    expect((await chainRuns(env, org, chain.chainId)).map((r) => r.state.input.message).sort()).to.deep.equal(
      ['once', 'twice'],
    );
  });

  it('keeps a delivery accepted while no worker runs, after the API is gone, and runs it once when a worker starts', async () => {
    const { env, org } = suite;
    // The API process that answers, serving a task queue no worker takes yet.
    const config: Config = {
      ...env.config,
      temporal: { ...env.config.temporal, taskQueue: `${env.config.temporal.taskQueue}-deliveries` },
    };
    const apiDeps = await createDeps(config, { logger: silent });
    const app = createApp(apiDeps);
    const { chain, webhookId } = await webhookWithChain(env, org, app);
    const deliver = () =>
      request(app)
        .post(org.path(`/webhooks/${webhookId}/execute`))
        .set('webhook-id', 'evt_while_down')
        .send({ text: 'while the workers were down', count: 7 })
        .expect(200, {});
    await deliver();
    await deliver(); // the sender retried: still one delivery
    // answered: the delivery's workflow exists, waiting for a worker
    const log = (
      await as(env, org.admin.token)
        .get(org.path(`/webhooks/${webhookId}/deliveries`))
        .expect(200)
    ).body;
    expect(log.items.map((d: { duplicates: number }) => d.duplicates)).to.deep.equal([1]);
    const deliveryId = log.items[0].deliveryId as string;
    const handle = env.deps.temporal.client.workflow.getHandle(
      workflowIds.webhookDelivery(org.organizationId, webhookId, deliveryId),
    );
    expect((await handle.describe()).status.name).to.equal('RUNNING');
    expect(await chainRuns(env, org, chain.chainId)).to.have.length(0);
    // the API goes away; later a worker comes up
    await closeDeps(apiDeps);
    const worker = await startTestWorker({ config });
    try {
      expect(await handle.result()).to.deep.equal({ handlers: 1 });
      const runs = await eventually(async () => {
        const all = await chainRuns(env, org, chain.chainId);
        return all.length === 1 && all[0]!.status === 'success' && all;
      }, 120_000);
      expect(runs[0]!.state.input).to.include({ message: 'while the workers were down', count: 7 });
    } finally {
      await worker.stop();
    }
    expect(await chainRuns(env, org, chain.chainId)).to.have.length(1);
  });

  it('starts a handler once however often its start is retried', async () => {
    const { env, org } = suite;
    const { chain, webhookId, handlerId } = await webhookWithChain(env, org);
    await request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .set('Idempotency-Key', 'evt_retry')
      .send({ text: 'retried', count: 1 })
      .expect(200);
    await eventually(
      async () => (await chainRuns(env, org, chain.chainId))[0]?.status === 'success',
      120_000,
    );
    const deliveryId = (
      await as(env, org.admin.token)
        .get(org.path(`/webhooks/${webhookId}/deliveries`))
        .expect(200)
    ).body.items[0].deliveryId as string;
    // the handler's activity run again (as a retry after a lost answer would): it finds what it started
    const activities = createTriggerHandlerActivities({
      repos: env.deps.repos,
      conversations: env.deps.services.conversations,
      chainRuns: env.deps.services.chainRuns,
      members: env.deps.services.users,
      logger: silent,
      plans: { schedule: () => Promise.resolve(null), webhook: webhookPlan(env.deps.repos) },
    });
    const input = {
      organizationId: org.organizationId,
      source: 'webhook' as const,
      parentId: webhookId,
      eventKey: deliveryId,
      handlerId,
    };
    const [first, second] = [
      await activities.runTriggerHandler(input),
      await activities.runTriggerHandler(input),
    ];
    expect(first).to.deep.equal(second);
    expect(first.status).to.equal('started');
    const runs = await chainRuns(env, org, chain.chainId);
    expect(runs).to.have.length(1);
    expect(first).to.deep.include({ runId: runs[0]!.runId });
  });

  it("starts a handler's chain run on the retry after Temporal refused its start, and fails it when the handler gives up", async () => {
    const { env, org } = suite;
    const { chain, webhookId, handlerId } = await webhookWithChain(env, org);
    const webhooks = env.deps.repos.tenant(org.organizationId).webhooks;
    const handlers = (chainRunsService: ChainRunsService) =>
      createTriggerHandlerActivities({
        repos: env.deps.repos,
        conversations: env.deps.services.conversations,
        chainRuns: chainRunsService,
        members: env.deps.services.users,
        logger: silent,
        plans: { schedule: () => Promise.resolve(null), webhook: webhookPlan(env.deps.repos) },
      });
    // nothing listens there: every start fails as when Temporal is down
    const unreachable = createTemporalClient({ ...env.config.temporal, address: '127.0.0.1:1' });
    const down = handlers(
      new ChainRunsService(
        env.deps.repos,
        unreachable,
        env.deps.services.chains,
        env.deps.services.admission,
      ),
    );
    const up = handlers(env.deps.services.chainRuns);
    try {
      /** A delivery as its workflow records it, whose handler has not run yet. */
      const recorded = async (deliveryId: string) => {
        await webhooks.recordDelivery(deliveryId, {
          webhookId,
          eventId: null,
          receivedAt: new Date(),
          requestJson: JSON.stringify({
            body: { text: deliveryId, count: 1 },
            headers: {},
            method: 'POST',
            path: `/orgs/${org.organizationId}/webhooks/${webhookId}/execute`,
            queryParams: {},
            pathParams: { webhookId },
          }),
        });
        return {
          organizationId: org.organizationId,
          source: 'webhook' as const,
          parentId: webhookId,
          eventKey: deliveryId,
          handlerId,
        };
      };

      const retried = await recorded('whd_refused_then_retried');
      let refused: unknown;
      await down.runTriggerHandler(retried).catch((err: unknown) => (refused = err));
      expect(refused, 'the failed start fails the attempt, so it is retried').to.be.instanceOf(Error);
      let runs = await chainRuns(env, org, chain.chainId);
      expect(runs.map((r) => r.status)).to.deep.equal(['pending']);
      const outcome = await up.runTriggerHandler(retried);
      expect(outcome).to.deep.include({ status: 'started', runId: runs[0]!.runId });
      await eventually(
        async () => (await chainRuns(env, org, chain.chainId))[0]?.status === 'success',
        120_000,
      );

      const abandoned = await recorded('whd_refused_to_the_end');
      await down.runTriggerHandler(abandoned).catch(() => undefined);
      await up.failTriggerHandler(abandoned, 'the handler could not be started: unavailable');
      runs = await chainRuns(env, org, chain.chainId);
      expect(runs).to.have.length(2);
      expect(runs.map((r) => r.status).sort()).to.deep.equal(['failed', 'success']);
    } finally {
      await unreachable.connection.close();
    }
  });
});
