import { expect } from 'chai';
import {
  BASE_URL,
  ctxOf,
  ORG,
  OTHER_ORG,
  refusal,
  webhooksWorld,
  type WebhooksWorld,
} from './webhooks-world';

/*
 * Managing webhooks (docs/webhooks.md, openapi createWebhook / updateWebhook / deleteWebhook and the delivery
 * log): defaults, the signing secret shown only in the answer that made it, fields left out keep their value,
 * 404s, and one organization never seeing another's webhooks.
 */
const admin = ctxOf('admin', 'usr_admin');
const stranger = ctxOf('admin', 'usr_other', OTHER_ORG);
const page = { limit: 20, offset: 0 };
const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;

describe('webhooks service', () => {
  let w: WebhooksWorld;
  beforeEach(() => {
    w = webhooksWorld();
  });

  describe('create', () => {
    it('stores the defaults: no description, no signatures, the service rate limit, no handlers', async () => {
      const hook = await w.webhooks.create(admin, { name: 'CRM events' });
      expect(hook).to.deep.equal({
        webhookId: hook.webhookId,
        organizationId: ORG,
        name: 'CRM events',
        description: '',
        creatorUserId: 'usr_admin',
        signatureVerification: false,
        rateLimitPerMinute: null,
        handlerCount: 0,
        createdAt: '2026-01-01T00:00:01.000Z',
        updatedAt: '2026-01-01T00:00:01.000Z',
        executeUrl: `${BASE_URL}/orgs/org_a/webhooks/${hook.webhookId}/execute`,
      });
      expect(hook.webhookId).to.match(/^whk_/);
      expect(w.tables.webhooks.get(hook.webhookId)?.signingSecret).to.equal(null);
    });

    it('keeps a description and a rate limit that are sent', async () => {
      const hook = await w.webhooks.create(admin, { name: 'n', description: 'd', rateLimitPerMinute: 5 });
      expect(hook).to.deep.include({ description: 'd', rateLimitPerMinute: 5 });
    });

    it('with signatures makes a whsec_ secret, shows it once, and never again', async () => {
      const hook = await w.webhooks.create(admin, { name: 'n', signatureVerification: true });
      expect(hook.signatureVerification).to.equal(true);
      expect((hook as { signingSecret?: string }).signingSecret).to.match(SECRET);
      expect(w.tables.webhooks.get(hook.webhookId)?.signingSecret).to.equal(
        (hook as { signingSecret?: string }).signingSecret,
      );
      const read = await w.webhooks.get(admin, hook.webhookId);
      expect(read).to.not.have.property('signingSecret');
      const listed = await w.webhooks.list(admin, page);
      expect(listed.items[0]).to.not.have.property('signingSecret');
    });
  });

  describe('update', () => {
    it('changes only the fields it sends', async () => {
      const hook = await w.webhooks.create(admin, { name: 'n', description: 'd', rateLimitPerMinute: 5 });
      const named = await w.webhooks.update(admin, hook.webhookId, { name: 'renamed' });
      expect(named).to.deep.include({ name: 'renamed', description: 'd', rateLimitPerMinute: 5 });
      const described = await w.webhooks.update(admin, hook.webhookId, {
        description: 'e',
        rateLimitPerMinute: 7,
      });
      expect(described).to.deep.include({ name: 'renamed', description: 'e', rateLimitPerMinute: 7 });
      expect(described).to.not.have.property('signingSecret');
    });

    it('turning signatures on makes a secret, shown in that answer only', async () => {
      const hook = await w.webhooks.create(admin, { name: 'n' });
      const on = await w.webhooks.update(admin, hook.webhookId, { signatureVerification: true });
      const secret = (on as { signingSecret?: string }).signingSecret;
      expect(secret).to.match(SECRET);
      expect(on.signatureVerification).to.equal(true);
      expect(w.tables.webhooks.get(hook.webhookId)?.signingSecret).to.equal(secret);
      // a later change that does not rotate keeps that secret and does not show it
      const again = await w.webhooks.update(admin, hook.webhookId, { name: 'x' });
      expect(again).to.not.have.property('signingSecret');
      expect(w.tables.webhooks.get(hook.webhookId)?.signingSecret).to.equal(secret);
      const still = await w.webhooks.update(admin, hook.webhookId, { signatureVerification: true });
      expect(still).to.not.have.property('signingSecret');
    });

    it('rotateSigningSecret makes a new secret when signatures are on (as stored or as sent)', async () => {
      const hook = await w.webhooks.create(admin, { name: 'n', signatureVerification: true });
      const first = (hook as { signingSecret?: string }).signingSecret;
      const rotated = await w.webhooks.update(admin, hook.webhookId, { rotateSigningSecret: true });
      const second = (rotated as { signingSecret?: string }).signingSecret;
      expect(second).to.match(SECRET).and.not.equal(first);
      expect(w.tables.webhooks.get(hook.webhookId)?.signingSecret).to.equal(second);

      const plain = await w.webhooks.create(admin, { name: 'p' });
      const both = await w.webhooks.update(admin, plain.webhookId, {
        signatureVerification: true,
        rotateSigningSecret: true,
      });
      expect((both as { signingSecret?: string }).signingSecret).to.match(SECRET);
    });

    it('refuses rotateSigningSecret without signatures, stored off or turned off in the same change', async () => {
      const plain = await w.webhooks.create(admin, { name: 'p' });
      const refused = {
        status: 400,
        code: 'validation_failed',
        message: 'rotateSigningSecret needs signatureVerification on',
      };
      expect(
        await refusal(w.webhooks.update(admin, plain.webhookId, { rotateSigningSecret: true })),
      ).to.deep.equal(refused);
      const signed = await w.webhooks.create(admin, { name: 's', signatureVerification: true });
      expect(
        await refusal(
          w.webhooks.update(admin, signed.webhookId, {
            signatureVerification: false,
            rotateSigningSecret: true,
          }),
        ),
      ).to.deep.equal(refused);
    });

    it('turning signatures off keeps no secret in the answer', async () => {
      const signed = await w.webhooks.create(admin, { name: 's', signatureVerification: true });
      const off = await w.webhooks.update(admin, signed.webhookId, { signatureVerification: false });
      expect(off.signatureVerification).to.equal(false);
      expect(off).to.not.have.property('signingSecret');
    });
  });

  describe('not found and other organizations', () => {
    it('answers 404 "webhook not found" for an unknown webhook on every operation', async () => {
      const missing = { status: 404, code: 'not_found', message: 'webhook not found' };
      expect(await refusal(w.webhooks.get(admin, 'whk_none'))).to.deep.equal(missing);
      expect(await refusal(w.webhooks.update(admin, 'whk_none', { name: 'x' }))).to.deep.equal(missing);
      expect(await refusal(w.webhooks.remove(admin, 'whk_none'))).to.deep.equal(missing);
      expect(await refusal(w.webhooks.listDeliveries(admin, 'whk_none', page))).to.deep.equal(missing);
      expect(await refusal(w.webhooks.getDelivery(admin, 'whk_none', 'whd_x'))).to.deep.equal(missing);
      expect(w.removedRuns).to.deep.equal([]);
    });

    it('answers 404 when the webhook is deleted while an update is under way', async () => {
      const { webhookId } = await w.webhooks.create(admin, { name: 'CRM events' });
      // the delete lands between the update's read and its write
      const repo = w.repo();
      const write = repo.update.bind(repo);
      repo.update = async (...args: Parameters<typeof write>) => {
        await w.webhooks.remove(admin, webhookId);
        return write(...args);
      };
      expect(await refusal(w.webhooks.update(admin, webhookId, { name: 'x' }))).to.deep.equal({
        status: 404,
        code: 'not_found',
        message: 'webhook not found',
      });
    });

    it("never shows, changes or deletes another organization's webhook", async () => {
      const hook = await w.webhooks.create(admin, { name: 'mine' });
      const missing = { status: 404, code: 'not_found', message: 'webhook not found' };
      expect(await refusal(w.webhooks.get(stranger, hook.webhookId))).to.deep.equal(missing);
      expect(await refusal(w.webhooks.update(stranger, hook.webhookId, { name: 'x' }))).to.deep.equal(
        missing,
      );
      expect(await refusal(w.webhooks.remove(stranger, hook.webhookId))).to.deep.equal(missing);
      expect((await w.webhooks.list(stranger, page)).items).to.deep.equal([]);
      expect((await w.webhooks.get(admin, hook.webhookId)).name).to.equal('mine');
    });
  });

  describe('list and delete', () => {
    it('lists the page asked for with the total and the offset', async () => {
      for (const name of ['a', 'b', 'c']) await w.webhooks.create(admin, { name });
      const second = await w.webhooks.list(admin, { limit: 1, offset: 1 });
      expect(second.items.map((h) => h.name)).to.deep.equal(['b']);
      expect(second).to.deep.include({ totalRows: 3, offset: 1 });
    });

    it("deletes the webhook, its handlers and log, and its handlers' execution records", async () => {
      const hook = await w.webhooks.create(admin, { name: 'n' });
      await w.repo().recordDelivery('whd_1', { webhookId: hook.webhookId, requestJson: null });
      expect(await w.webhooks.remove(admin, hook.webhookId)).to.deep.equal({ success: true });
      expect(w.removedRuns).to.deep.equal([[ORG, hook.webhookId]]);
      expect(w.tables.deliveries.size).to.equal(0);
      expect(await refusal(w.webhooks.get(admin, hook.webhookId))).to.deep.include({ status: 404 });
    });
  });

  describe('the delivery log', () => {
    async function withDeliveries() {
      const hook = await w.webhooks.create(admin, { name: 'n' });
      const request = {
        body: { a: 1 },
        headers: {},
        method: 'POST',
        path: '/x',
        queryParams: {},
        pathParams: {},
      };
      await w.repo().recordDelivery('whd_1', {
        webhookId: hook.webhookId,
        eventId: 'evt_1',
        receivedAt: new Date('2026-02-01T10:00:00Z'),
        requestJson: JSON.stringify(request),
      });
      await w.repo().noteDuplicate('whd_2', hook.webhookId);
      return { hook, request };
    }

    it('shows each delivery with its fields, newest first', async () => {
      const { hook } = await withDeliveries();
      const log = await w.webhooks.listDeliveries(admin, hook.webhookId, page);
      expect(log).to.deep.include({ totalRows: 2, offset: 0 });
      expect(log.items).to.deep.equal([
        {
          deliveryId: 'whd_2',
          webhookId: hook.webhookId,
          eventId: null,
          status: 'received',
          handlers: 0,
          duplicates: 1,
          // not received yet: the time it was first written
          receivedAt: '2026-01-01T00:00:03.000Z',
          lastDuplicateAt: '2026-01-01T00:00:04.000Z',
        },
        {
          deliveryId: 'whd_1',
          webhookId: hook.webhookId,
          eventId: 'evt_1',
          status: 'received',
          handlers: 0,
          duplicates: 0,
          receivedAt: '2026-02-01T10:00:00.000Z',
          lastDuplicateAt: null,
        },
      ]);
    });

    it('shows one delivery with the request as handlers see it and its handler runs', async () => {
      const { hook, request } = await withDeliveries();
      const one = await w.webhooks.getDelivery(admin, hook.webhookId, 'whd_1');
      expect(one).to.deep.include({ deliveryId: 'whd_1', eventId: 'evt_1', request });
      expect(one.handlerRuns).to.deep.equal([{ handlerId: 'whh_x', status: 'success' }]);
      expect(w.runsAsked).to.deep.equal([[ORG, hook.webhookId, 'whd_1']]);
      // a delivery whose request is not stored yet shows none
      expect((await w.webhooks.getDelivery(admin, hook.webhookId, 'whd_2')).request).to.equal(null);
    });

    it("answers 404 'delivery not found' for an unknown delivery or another webhook's", async () => {
      const { hook } = await withDeliveries();
      const other = await w.webhooks.create(admin, { name: 'other' });
      const missing = { status: 404, code: 'not_found', message: 'delivery not found' };
      expect(await refusal(w.webhooks.getDelivery(admin, hook.webhookId, 'whd_none'))).to.deep.equal(missing);
      expect(await refusal(w.webhooks.getDelivery(admin, other.webhookId, 'whd_1'))).to.deep.equal(missing);
      expect((await w.webhooks.listDeliveries(admin, other.webhookId, page)).items).to.deep.equal([]);
    });
  });
});
