import { expect } from 'chai';
import request from 'supertest';
import { workflowIds } from '@contracts';
import { contentDigest, eventDeliveryId, unsignedDeliveryId } from '@lib/webhooks/delivery-ids';
import { sign } from '@lib/webhooks/signature';
import { as, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { createMessageWebhook } from '@test/helpers/webhooks';
import { useWorkerAndOrg } from '@test/helpers/worker';
import type { TestEnv } from '@test/helpers/env';

interface DeliveryItem {
  deliveryId: string;
  eventId: string | null;
  duplicates: number;
  lastDuplicateAt: string | null;
}

// Issue 32, item 7: an unsigned delivery's event id is the caller's choice, so it cannot alone decide that a
// delivery was already taken.
describe('webhook deliveries: unsigned ones deduplicate on the event id and the content', function () {
  this.timeout(300_000);
  const suite = useWorkerAndOrg('Webhook Dedupe Org');

  async function webhookWithChain(env: TestEnv, org: TestOrg, webhook: Record<string, unknown> = {}) {
    const { chain, webhookId, signingSecret } = await createMessageWebhook(env, org, {
      name: 'Payments',
      ...webhook,
    });
    chain.answer({ content: '{"ok": true}' });
    const messages = async () => {
      const runs = await as(env, org.owner.token)
        .get(org.path(`/chains/${chain.chainId}/runs?limit=100`))
        .expect(200);
      const items = runs.body.items as Array<{ status: string; state: { input: { message: string } } }>;
      return items.filter((r) => r.status === 'success').map((r) => r.state.input.message);
    };
    const log = async () =>
      (
        await as(env, org.admin.token)
          .get(org.path(`/webhooks/${webhookId}/deliveries`))
          .expect(200)
      ).body.items as DeliveryItem[];
    return { webhookId, signingSecret, messages, log };
  }

  it('runs the real delivery after a stranger sent its event id first, and still runs a retry once', async () => {
    const { env, org } = suite;
    const { webhookId, messages, log } = await webhookWithChain(env, org);
    const send = (text: string) =>
      request(env.app)
        .post(org.path(`/webhooks/${webhookId}/execute`))
        .set('Idempotency-Key', 'evt_paid_7')
        .send({ text })
        .expect(200, {});
    await send('forged first');
    await send('the real payment');
    await send('the real payment'); // the sender's retry
    const ran = await eventually(async () => {
      const done = await messages();
      return done.length === 2 && done;
    }, 120_000);
    expect(ran.sort()).to.deep.equal(['forged first', 'the real payment']);
    const deliveries = await log();
    expect(deliveries).to.have.length(2);
    expect(deliveries.map((d) => d.eventId)).to.deep.equal(['evt_paid_7', 'evt_paid_7']);
    expect(deliveries.map((d) => d.duplicates).sort()).to.deep.equal([0, 1]);
  });

  it('keeps deliveries recorded under the event id alone deduplicated, with the same content only', async () => {
    const { env, org } = suite;
    const { webhookId, messages, log } = await webhookWithChain(env, org);
    // A delivery accepted before the content was part of the id, as its workflow recorded it.
    const legacyId = eventDeliveryId(webhookId, 'evt_before');
    await env.deps.repos.tenant(org.organizationId).webhooks.recordDelivery(legacyId, {
      webhookId,
      eventId: 'evt_before',
      receivedAt: new Date(),
      requestJson: JSON.stringify({
        body: { text: 'before the change' },
        headers: {},
        method: 'POST',
        path: `/orgs/${org.organizationId}/webhooks/${webhookId}/execute`,
        queryParams: {},
        pathParams: { organizationId: org.organizationId, webhookId },
      }),
    });
    const send = (text: string) =>
      request(env.app)
        .post(org.path(`/webhooks/${webhookId}/execute`))
        .set('webhook-id', 'evt_before')
        .send({ text })
        .expect(200, {});
    await send('before the change'); // the sender's retry, after the change
    expect((await log()).find((d) => d.deliveryId === legacyId)).to.include({ duplicates: 1 });
    const retryId = unsignedDeliveryId(
      webhookId,
      'evt_before',
      contentDigest({ text: 'before the change' }, {}),
    );
    const notStarted = await env.deps.temporal.client.workflow
      .getHandle(workflowIds.webhookDelivery(org.organizationId, webhookId, retryId))
      .describe()
      .then(
        () => 'started',
        (err: Error) => err.name,
      );
    expect(notStarted).to.equal('WorkflowNotFoundError');
    await send('something else under the same id');
    await eventually(async () => (await messages()).length === 1, 120_000);
    expect(await messages()).to.deep.equal(['something else under the same id']);
  });

  it('counts the query parameters as content: the same event id and body with other parameters is a delivery of its own', async () => {
    const { env, org } = suite;
    const { messages, log, webhookId } = await webhookWithChain(env, org);
    const send = (query: string) =>
      request(env.app)
        .post(org.path(`/webhooks/${webhookId}/execute?${query}`))
        .set('Idempotency-Key', 'evt_shipped_3')
        .send({ text: 'order shipped' })
        .expect(200, {});
    await send('region=eu');
    await send('region=us');
    await send('region=eu'); // the sender's retry
    await eventually(async () => (await messages()).length === 2, 120_000);
    expect(await messages()).to.deep.equal(['order shipped', 'order shipped']);
    const deliveries = await log();
    expect(deliveries.map((d) => d.eventId)).to.deep.equal(['evt_shipped_3', 'evt_shipped_3']);
    expect(deliveries.map((d) => d.duplicates).sort()).to.deep.equal([0, 1]);
    // the time of the last duplicate: only the delivery that was sent again has one
    const again = deliveries.find((d) => d.duplicates === 1)!;
    const once = deliveries.find((d) => d.duplicates === 0)!;
    expect(again.lastDuplicateAt).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(once.lastDuplicateAt).to.equal(null);
  });

  it('runs every delivery without an event id, the same body twice included (nothing says it is a retry)', async () => {
    const { env, org } = suite;
    const { messages, log, webhookId } = await webhookWithChain(env, org);
    const send = () =>
      request(env.app)
        .post(org.path(`/webhooks/${webhookId}/execute`))
        .send({ text: 'two of the same' })
        .expect(200, {});
    await send();
    await send();
    await eventually(async () => (await messages()).length === 2, 120_000);
    const deliveries = await log();
    expect(deliveries.map((d) => [d.eventId, d.duplicates])).to.deep.equal([
      [null, 0],
      [null, 0],
    ]);
  });

  it('deduplicates signed deliveries on the event id: only the secret holder can send it', async () => {
    const { env, org } = suite;
    const { webhookId, signingSecret, messages, log } = await webhookWithChain(env, org, {
      signatureVerification: true,
    });
    const send = (text: string) => {
      const body = JSON.stringify({ text });
      const now = String(Math.floor(Date.now() / 1000));
      return request(env.app)
        .post(org.path(`/webhooks/${webhookId}/execute`))
        .set('content-type', 'application/json')
        .set('webhook-id', 'msg_signed')
        .set('webhook-timestamp', now)
        .set('webhook-signature', `v1,${sign(signingSecret!, 'msg_signed', now, body)}`)
        .send(body)
        .expect(200, {});
    };
    await send('signed once');
    await send('signed again, other body');
    expect((await log()).map((d) => d.duplicates)).to.deep.equal([1]);
    await eventually(async () => (await messages()).length === 1, 120_000);
    expect(await messages()).to.deep.equal(['signed once']);
  });
});
