import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import request from 'supertest';
import { workflowIds } from '@contracts';
import { createRunnableChain, finished } from '@test/helpers/chains';
import { testEnv } from '@test/helpers/env';
import { as, createTestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { startWorkerProcess } from '@test/helpers/worker-process';

describe('a worker killed while a webhook delivery is being handled', () => {
  const workers: ChildProcess[] = [];
  after(() => workers.forEach((w) => w.kill('SIGKILL')));

  it('is replaced by another worker; the delivery and its handler run exactly once', async function () {
    this.timeout(240_000);
    const env = await testEnv();
    const org = await createTestOrg(env, 'Webhook Crash Org');
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        instructions: 'Handle {{input.text}}',
        outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
    ]);
    let stuck = true;
    chain.answer(async () => {
      // The first worker's model call never gets an answer: the worker dies waiting for it.
      if (stuck) await new Promise(() => undefined);
      return { content: '{"ok": true}' };
    });
    const owner = as(env, org.owner.token);
    const webhook = await owner.post(org.path('/webhooks'), { name: 'Crash' }).expect(201);
    const webhookId = webhook.body.webhookId as string;
    await owner
      .post(org.path(`/webhooks/${webhookId}/handlers`), {
        handlerType: 'action-chain',
        actionChainId: chain.chainId,
        instructions: 'Handle it',
      })
      .expect(201);

    // accepted with no worker at all; then a worker takes it and dies in the middle of the handler's chain run
    await request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .set('Idempotency-Key', 'evt_crash')
      .send({ text: 'survive' })
      .expect(200, {});
    const first = startWorkerProcess(env);
    workers.push(first);
    await eventually(() => chain.calls().length > 0, 120_000);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    stuck = false;
    // the sender retries meanwhile: a duplicate, nothing more runs
    await request(env.app)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .set('Idempotency-Key', 'evt_crash')
      .send({ text: 'survive' })
      .expect(200, {});

    workers.push(startWorkerProcess(env));
    const runs = await owner.get(org.path(`/chains/${chain.chainId}/runs`)).expect(200);
    expect(runs.body.totalRows).to.equal(1);
    const runId = runs.body.items[0].runId as string;
    const run = await finished(env, org, chain.chainId, runId, 180_000);
    expect(run.status, run.statusMessage ?? '').to.equal('success');
    expect(run.state.input).to.deep.equal({ text: 'survive' });
    const log = await owner.get(org.path(`/webhooks/${webhookId}/deliveries`)).expect(200);
    expect(log.body.totalRows).to.equal(1);
    expect(log.body.items[0]).to.include({
      eventId: 'evt_crash',
      handlers: 1,
      duplicates: 1,
      status: 'dispatched',
    });
    const delivery = env.deps.temporal.client.workflow.getHandle(
      workflowIds.webhookDelivery(org.organizationId, webhookId, log.body.items[0].deliveryId as string),
    );
    expect(await delivery.result()).to.deep.equal({ handlers: 1 });
    expect((await owner.get(org.path(`/chains/${chain.chainId}/runs`)).expect(200)).body.totalRows).to.equal(
      1,
    );
  });
});
