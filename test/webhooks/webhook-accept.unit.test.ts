import { expect } from 'chai';
import { createHash, createHmac } from 'node:crypto';
import { TooManyRequestsError } from '@lib/errors';
import type { IncomingDelivery } from '@lib/webhooks/webhook-deliveries.service';
import { ctxOf, ORG, OTHER_ORG, refusal, webhooksWorld, type WebhooksWorld } from './webhooks-world';

/*
 * Accepting a delivery (docs/webhooks.md "Never lost, never doubled", "Signatures", "Limits"; openapi
 * executeWebhook): answered once its workflow `webhook-delivery-<org>-<webhookId>-<deliveryId>` has started; the
 * same event sent again starts nothing and is counted; for an unsigned webhook the id and the content (body and
 * query parameters, not headers) decide, for a signed one the id alone; 401 / 404 / 429 / 503 as documented.
 */
const admin = ctxOf('admin', 'usr_admin');
const page = { limit: 20, offset: 0 };

describe('accepting webhook deliveries', () => {
  let w: WebhooksWorld;
  let hookId: string;
  const delivery = (over: Partial<IncomingDelivery> = {}): IncomingDelivery => ({
    organizationId: ORG,
    webhookId: hookId,
    rawBody: Buffer.from('{"a":1}'),
    body: { a: 1 },
    headers: {},
    method: 'POST',
    path: `/orgs/org_a/webhooks/${hookId}/execute`,
    queryParams: {},
    ...over,
  });
  const withId = (eventId: string, over: Partial<IncomingDelivery> = {}) =>
    delivery({ ...over, headers: { 'webhook-id': eventId, ...over.headers } });
  const runs = () => w.started.length;
  const log = async () => (await w.webhooks.listDeliveries(admin, hookId, page)).items;

  beforeEach(async () => {
    w = webhooksWorld();
    hookId = (await w.webhooks.create(admin, { name: 'CRM events' })).webhookId;
  });

  it('starts the delivery workflow with the request as handlers will see it', async () => {
    const res = await w.deliveries.accept(
      withId('evt_1', {
        body: undefined,
        headers: { 'x-source': 'crm', authorization: 'Bearer x', 'x-tag': ['a', 'b'] },
        queryParams: { ref: '42' },
      }),
    );
    expect(res.duplicate).to.equal(false);
    expect(res.deliveryId).to.match(/^whd_/);
    expect(w.started).to.have.length(1);
    const { workflowType, options } = w.started[0]!;
    expect(workflowType).to.equal('webhookDeliveryWorkflow');
    expect(options.workflowId).to.equal(`webhook-delivery-org_a-${hookId}-${res.deliveryId}`);
    // an event id is accepted once, even after its delivery finished
    expect(options.workflowIdReusePolicy).to.equal('REJECT_DUPLICATE');
    expect(options.typedSearchAttributes).to.deep.equal([
      { key: { name: 'OrganizationId', type: 'KEYWORD' }, value: ORG },
      { key: { name: 'TriggerId', type: 'KEYWORD' }, value: hookId },
    ]);
    const [input] = options.args as Array<Record<string, unknown>>;
    expect(input).to.deep.include({
      organizationId: ORG,
      webhookId: hookId,
      deliveryId: res.deliveryId,
      eventId: 'evt_1',
    });
    expect(input!.receivedAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(input!.request).to.deep.equal({
      body: null,
      headers: { 'webhook-id': 'evt_1', 'x-source': 'crm', 'x-tag': 'a, b' },
      method: 'POST',
      path: `/orgs/org_a/webhooks/${hookId}/execute`,
      queryParams: { ref: '42' },
      pathParams: { organizationId: ORG, webhookId: hookId },
    });
  });

  it('runs every delivery without an event id, even the same content twice', async () => {
    const first = await w.deliveries.accept(delivery());
    const second = await w.deliveries.accept(delivery());
    expect(first.deliveryId).to.not.equal(second.deliveryId);
    expect(second.duplicate).to.equal(false);
    expect(runs()).to.equal(2);
    expect((w.started[0]!.options.args as Array<{ eventId: unknown }>)[0]!.eventId).to.equal(null);
    // delivery ids carry the whd_ prefix whatever their origin (lib/ids.ts: `<prefix>_…`)
    expect(first.deliveryId).to.match(/^whd_[\w-]{16}$/);
  });

  it('takes a header sent more than once as its values joined by ", ", as HTTP folds them', async () => {
    await w.deliveries.accept(delivery({ headers: { 'idempotency-key': ['evt_a', 'evt_b'] } }));
    expect((w.started[0]!.options.args as Array<{ eventId: unknown }>)[0]!.eventId).to.equal('evt_a, evt_b');
    const folded = await w.deliveries.accept(delivery({ headers: { 'idempotency-key': 'evt_a, evt_b' } }));
    expect(folded.duplicate).to.equal(true);
  });

  it('takes the event id from Idempotency-Key when there is no webhook-id, and webhook-id first', async () => {
    const byKey = await w.deliveries.accept(delivery({ headers: { 'idempotency-key': 'evt_k' } }));
    const again = await w.deliveries.accept(delivery({ headers: { 'idempotency-key': 'evt_k' } }));
    expect(again).to.deep.equal({ duplicate: true, deliveryId: byKey.deliveryId });
    await w.deliveries.accept(delivery({ headers: { 'webhook-id': 'evt_w', 'idempotency-key': 'evt_k' } }));
    const args = w.started.map((s) => (s.options.args as Array<{ eventId: string }>)[0]!.eventId);
    expect(args).to.deep.equal(['evt_k', 'evt_w']);
  });

  describe('an unsigned webhook: the event id and the content decide', () => {
    it('answers the same id and content again as a duplicate, counted in the log, and gives its slot back', async () => {
      const first = await w.deliveries.accept(withId('evt_1'));
      // the sender's retry may change headers: still the same delivery
      const again = await w.deliveries.accept(withId('evt_1', { headers: { 'x-retry': '1' } }));
      expect(again).to.deep.equal({ duplicate: true, deliveryId: first.deliveryId });
      expect(runs()).to.equal(1);
      expect(w.released).to.deep.equal([`webhook-delivery-org_a-${hookId}-${first.deliveryId}`]);
      const [entry] = await log();
      expect(entry).to.deep.include({ deliveryId: first.deliveryId, duplicates: 1 });
      expect(entry!.lastDuplicateAt).to.be.a('string');
    });

    it('runs the same id with another body or other query parameters as a delivery of its own', async () => {
      const first = await w.deliveries.accept(withId('evt_1'));
      const body = await w.deliveries.accept(withId('evt_1', { body: { a: 2 } }));
      const query = await w.deliveries.accept(withId('evt_1', { queryParams: { x: '1' } }));
      expect(new Set([first.deliveryId, body.deliveryId, query.deliveryId]).size).to.equal(3);
      expect([body.duplicate, query.duplicate]).to.deep.equal([false, false]);
      expect(runs()).to.equal(3);
    });

    it('counts a delivery recorded under the event id alone (signed, or from before) with the same content', async () => {
      // A delivery taken while the webhook checked signatures is recorded under its event id alone.
      const secret = (await w.webhooks.update(admin, hookId, { signatureVerification: true })) as {
        signingSecret: string;
      };
      const signed = await w.deliveries.accept(signedDelivery(secret.signingSecret, 'evt_1', '{"a":1}'));
      // sent again before its workflow stored the request: a record of the id without the request
      await w.deliveries.accept(signedDelivery(secret.signingSecret, 'evt_1', '{"a":1}'));
      await w.webhooks.update(admin, hookId, { signatureVerification: false });

      // the request is not stored yet, so the content cannot be compared: the id was taken, so it counts as taken
      const early = await w.deliveries.accept(withId('evt_1', { body: { a: 9 } }));
      expect(early).to.deep.equal({ duplicate: true, deliveryId: signed.deliveryId });

      await w.deliveries.record((w.started[0]!.options.args as never[])[0]!);
      const same = await w.deliveries.accept(withId('evt_1'));
      expect(same).to.deep.equal({ duplicate: true, deliveryId: signed.deliveryId });
      const other = await w.deliveries.accept(withId('evt_1', { body: { a: 2 } }));
      expect(other.duplicate).to.equal(false);
      expect(other.deliveryId).to.not.equal(signed.deliveryId);
      expect(runs()).to.equal(2);
      expect((await log()).find((d) => d.deliveryId === signed.deliveryId)?.duplicates).to.equal(3);
    });
  });

  function signedDelivery(secret: string, id: string, raw: string, at = Date.now()) {
    const timestamp = String(Math.floor(at / 1000));
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${raw}`).digest('base64');
    return delivery({
      rawBody: Buffer.from(raw),
      body: JSON.parse(raw) as unknown,
      headers: { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` },
    });
  }

  describe('a signed webhook', () => {
    let secret: string;
    beforeEach(async () => {
      const hook = await w.webhooks.update(admin, hookId, { signatureVerification: true });
      secret = (hook as { signingSecret: string }).signingSecret;
    });

    it('accepts a valid signature, hides it from handlers, and lets the id alone decide', async () => {
      const first = await w.deliveries.accept(signedDelivery(secret, 'evt_1', '{"a":1}'));
      const input = (w.started[0]!.options.args as Array<{ request: { headers: object } }>)[0]!;
      expect(input.request.headers).to.not.have.property('webhook-signature');
      expect(input.request.headers).to.have.property('webhook-id', 'evt_1');
      const other = await w.deliveries.accept(signedDelivery(secret, 'evt_1', '{"a":2}'));
      expect(other).to.deep.equal({ duplicate: true, deliveryId: first.deliveryId });
      expect(runs()).to.equal(1);
    });

    it('derives the delivery id from the webhook and the event id by the stored rule', async () => {
      // deliveries recorded before a deploy are found after it only if the rule never changes (lib/ids.ts):
      // `whd_` and 22 characters of the base64url SHA-256 of "<webhookId>\n<eventId>"
      const digest = createHash('sha256').update(`${hookId}\nevt_1`).digest('base64url');
      const res = await w.deliveries.accept(signedDelivery(secret, 'evt_1', '{"a":1}'));
      expect(res.deliveryId).to.equal(`whd_${digest.slice(0, 22)}`);
    });

    it('refuses a missing or wrong signature with 401 invalid_signature, starting nothing', async () => {
      expect(await refusal(w.deliveries.accept(withId('evt_1')))).to.deep.include({
        status: 401,
        code: 'invalid_signature',
      });
      const wrong = signedDelivery(secret, 'evt_1', '{"a":1}');
      expect(
        await refusal(w.deliveries.accept({ ...wrong, rawBody: Buffer.from('{"a":2}') })),
      ).to.deep.include({
        status: 401,
        code: 'invalid_signature',
      });
      expect(runs()).to.equal(0);
      expect(w.taken).to.deep.equal([]);
    });

    it('refuses a timestamp outside the configured replay window with 401 stale_signature', async () => {
      w = webhooksWorld({ ratePerMinute: 600, signatureToleranceSeconds: 60 });
      hookId = (await w.webhooks.create(admin, { name: 'n', signatureVerification: true })).webhookId;
      secret = w.tables.webhooks.get(hookId)!.signingSecret!;
      const stale = signedDelivery(secret, 'evt_1', '{"a":1}', Date.now() - 120_000);
      expect(await refusal(w.deliveries.accept(stale))).to.deep.equal({
        status: 401,
        code: 'stale_signature',
        message: 'webhook-timestamp is more than 60 seconds away from now (a replay, or a clock far off)',
      });
    });
  });

  describe('refusals', () => {
    it("answers 404 for an unknown webhook or another organization's, the same either way", async () => {
      const missing = { status: 404, code: 'not_found', message: 'webhook not found' };
      expect(await refusal(w.deliveries.accept(delivery({ webhookId: 'whk_none' })))).to.deep.equal(missing);
      expect(await refusal(w.deliveries.accept(delivery({ organizationId: OTHER_ORG })))).to.deep.equal(
        missing,
      );
      expect(runs()).to.equal(0);
    });

    it("checks the webhook's own rate limit, else the service's, and starts nothing when over it", async () => {
      await w.deliveries.accept(delivery());
      await w.webhooks.update(admin, hookId, { rateLimitPerMinute: 5 });
      await w.deliveries.accept(delivery());
      expect(w.taken).to.deep.equal([
        [hookId, 600],
        [hookId, 5],
      ]);
      w.setRateLimited(new TooManyRequestsError('slow down', 30, 'rate_limited'));
      expect(await refusal(w.deliveries.accept(delivery()))).to.deep.include({
        status: 429,
        code: 'rate_limited',
      });
      expect(runs()).to.equal(2);
    });

    it('refuses at once while the backlog of deliveries or chain runs is full, before reading the webhook', async () => {
      w.full.add('chain_runs');
      expect(await refusal(w.deliveries.accept(delivery({ webhookId: 'whk_none' })))).to.deep.include({
        status: 429,
        code: 'backlog_full',
      });
      expect(w.admissionCalls).to.deep.equal([['refuseIfFull', ORG, ['webhook_deliveries', 'chain_runs']]]);
      expect(w.taken).to.deep.equal([]);
    });

    it('admits the delivery as one of webhook_deliveries, with room for the chain runs it leads to', async () => {
      const { deliveryId } = await w.deliveries.accept(delivery());
      const workflowId = `webhook-delivery-org_a-${hookId}-${deliveryId}`;
      expect(w.admissionCalls.slice(1)).to.deep.equal([
        ['admit', ORG, 'webhook_deliveries', workflowId, ['chain_runs']],
        ['startCounted', ORG, 'webhook_deliveries', workflowId],
      ]);
      expect(w.released).to.deep.equal([]);
    });

    it('answers 503 when the delivery cannot be recorded, naming the dependency, and gives the slot back', async () => {
      w.setTemporalDown(new Error('connection refused'));
      const err = (await w.deliveries.accept(delivery()).catch((e: unknown) => e)) as Record<string, unknown>;
      expect(err).to.deep.include({
        status: 503,
        code: 'service_unavailable',
        message: 'the delivery could not be recorded; send it again',
        dependency: 'temporal',
      });
      expect(w.released).to.have.length(1);
      expect(w.logged).to.deep.equal(['webhook delivery could not be recorded']);
      // the operator needs the cause and which webhook lost the delivery
      expect(w.loggedWith[0]).to.deep.include({ organizationId: ORG, webhookId: hookId });
      expect((w.loggedWith[0] as { err: Error }).err.message).to.equal('connection refused');
      w.setTemporalDown(Object.assign(new Error('no server'), { name: 'MongoNetworkError' }));
      expect(await w.deliveries.accept(delivery()).catch((e: unknown) => e)).to.have.property(
        'dependency',
        'database',
      );
    });
  });

  describe('recording a delivery in its workflow', () => {
    const input = (deliveryId: string) => ({
      organizationId: ORG,
      webhookId: hookId,
      deliveryId,
      eventId: 'evt_1',
      receivedAt: '2026-03-01T12:00:00.000Z',
      request: { body: { a: 1 }, headers: {}, method: 'POST', path: '/p', queryParams: {}, pathParams: {} },
    });

    it("stores what was received and returns the webhook's handlers in order", async () => {
      w.chains.set('chn_1', [ORG, 'Triage']);
      const h = { handlerType: 'action-chain' as const, actionChainId: 'chn_1', instructions: 'x' };
      const one = await w.handlers.create(admin, hookId, h);
      const two = await w.handlers.create(admin, hookId, h);
      expect(await w.deliveries.record(input('whd_1'))).to.deep.equal([one.handlerId, two.handlerId]);
      const shown = await w.webhooks.getDelivery(admin, hookId, 'whd_1');
      expect(shown).to.deep.include({
        eventId: 'evt_1',
        status: 'received',
        receivedAt: '2026-03-01T12:00:00.000Z',
        request: input('whd_1').request,
      });
      await w.deliveries.markDispatched(ORG, 'whd_1', 2);
      expect(await w.webhooks.getDelivery(admin, hookId, 'whd_1')).to.deep.include({
        status: 'dispatched',
        handlers: 2,
      });
    });

    it('stores nothing and starts no handler when the webhook was deleted meanwhile', async () => {
      await w.webhooks.remove(admin, hookId);
      expect(await w.deliveries.record(input('whd_1'))).to.deep.equal([]);
      expect(w.tables.deliveries.size).to.equal(0);
    });
  });
});
