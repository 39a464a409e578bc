import { expect } from 'chai';
import request from 'supertest';
import { createTestAgent } from '@test/helpers/agents';
import type { TestEnv } from '@test/helpers/env';
import { as, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { useWebhookSuite } from '@test/webhooks/webhook-suite';

// Management, limits and the checks of POST …/execute that answer before anything runs (no worker here: an
// accepted delivery's workflow just waits on this file's task queue).
describe('webhooks: management, limits, signatures', function () {
  this.timeout(300_000);
  const { suite, admin, execute, createChain, createWebhook } = useWebhookSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  it('creates, lists, reads, changes and deletes webhooks and their handlers', async () => {
    const created = await createWebhook({ description: 'Payment events' });
    expect(created).to.include({
      organizationId: org.organizationId,
      name: 'Events',
      description: 'Payment events',
      creatorUserId: org.admin.userId,
      signatureVerification: false,
      rateLimitPerMinute: null,
      handlerCount: 0,
    });
    expect(created).to.not.have.property('signingSecret');
    expect(created.executeUrl).to.match(
      new RegExp(`/orgs/${org.organizationId}/webhooks/${created.webhookId}/execute$`),
    );
    const id = created.webhookId;
    await createWebhook({ name: 'Second' });
    const list = await admin().get(org.path('/webhooks?limit=1&cursor=1')).expect(200);
    expect(list.body).to.include({ totalRows: 2, offset: 1 });
    expect(list.body.items[0].name).to.equal('Second');
    const put = await admin()
      .put(org.path(`/webhooks/${id}`), { name: 'Renamed' })
      .expect(200);
    expect(put.body).to.include({ name: 'Renamed', description: 'Payment events' });

    const chainId = await createChain();
    const { agentId } = await createTestAgent(env, org.organizationId, { name: 'Triager' });
    const handlers = org.path(`/webhooks/${id}/handlers`);
    const chainHandler = await admin()
      .post(handlers, {
        handlerType: 'action-chain',
        actionChainId: chainId,
        instructions: 'Triage it',
        inputMapping: { message: '{{body.text}}' },
      })
      .expect(201);
    expect(chainHandler.body).to.include({
      webhookId: id,
      actionChainId: chainId,
      actionChainName: 'Triage',
      agentId: null,
    });
    expect(chainHandler.body.inputMapping).to.deep.equal({ message: '{{body.text}}' });
    await admin() // an admin who may not use the agent
      .post(handlers, { handlerType: 'agent', agentId, instructions: 'x' })
      .expect(invalidReference('agentId'));
    const agentHandler = await as(env, org.owner.token)
      .post(handlers, { handlerType: 'agent', agentId, instructions: 'Answer the sender' })
      .expect(201);
    expect(agentHandler.body).to.include({ agentId, agentName: 'Triager' });
    await admin().post(handlers, { handlerType: 'agent', instructions: 'x' }).expect(400);
    await admin().post(handlers, { handlerType: 'action-chain', instructions: 'x' }).expect(400);
    await admin()
      .post(handlers, { handlerType: 'action-chain', actionChainId: 'chn_nope', instructions: 'x' })
      .expect(400);
    await admin()
      .post(handlers, { handlerType: 'workflow', actionChainId: chainId, instructions: 'x' })
      .expect(400);
    const badTemplate = await admin()
      .post(handlers, {
        handlerType: 'action-chain',
        actionChainId: chainId,
        instructions: 'x',
        inputMapping: { message: '{{#if body}}' },
      })
      .expect(400);
    expect(badTemplate.body.error.message).to.contain('inputMapping.message');

    const handlerId = chainHandler.body.handlerId as string;
    // a handler is reached only through its own webhook
    const { webhookId: sibling } = await createWebhook({ name: 'Sibling' });
    await admin()
      .get(org.path(`/webhooks/${sibling}/handlers/${handlerId}`))
      .expect(404);
    await admin()
      .put(org.path(`/webhooks/${sibling}/handlers/${handlerId}`), { instructions: 'y' })
      .expect(404);
    await admin()
      .delete(org.path(`/webhooks/${sibling}/handlers/${handlerId}`))
      .expect(404);
    const changed = await admin()
      .put(`${handlers}/${handlerId}`, {
        instructions: 'Triage it again',
        inputMapping: { message: '{{body.note}}' },
      })
      .expect(200);
    expect(changed.body).to.include({ instructions: 'Triage it again', actionChainId: chainId });
    expect((await admin().get(`${handlers}?limit=1`).expect(200)).body).to.include({ totalRows: 2 });
    expect(
      (
        await admin()
          .get(org.path(`/webhooks/${sibling}`))
          .expect(200)
      ).body.handlerCount,
    ).to.equal(0);
    expect(
      (
        await admin()
          .get(org.path(`/webhooks/${id}`))
          .expect(200)
      ).body.handlerCount,
    ).to.equal(2);
    await admin().delete(`${handlers}/${handlerId}`).expect(200, { success: true });
    await admin().get(`${handlers}/${handlerId}`).expect(404);
    expect(
      (
        await admin()
          .get(org.path(`/webhooks/${id}`))
          .expect(200)
      ).body.handlerCount,
    ).to.equal(1);

    await admin()
      .delete(org.path(`/webhooks/${id}`))
      .expect(200, { success: true });
    await admin()
      .get(org.path(`/webhooks/${id}`))
      .expect(404);
    await admin().get(`${handlers}/${agentHandler.body.handlerId}`).expect(404);
    await execute(org, id).send({}).expect(404);
  });

  it("PUT keeps omitted optional fields: a handler's inputMapping is kept when left out, cleared by null", async () => {
    const { webhookId } = await createWebhook();
    const handlers = org.path(`/webhooks/${webhookId}/handlers`);
    const created = await admin()
      .post(handlers, {
        handlerType: 'action-chain',
        actionChainId: await createChain(),
        instructions: 'Triage it',
        inputMapping: { message: '{{body.text}}' },
      })
      .expect(201);
    const path = `${handlers}/${created.body.handlerId}`;
    const kept = await admin().put(path, { instructions: 'Triage it again' }).expect(200);
    expect(kept.body).to.deep.include({
      instructions: 'Triage it again',
      inputMapping: { message: '{{body.text}}' },
    });
    const cleared = await admin().put(path, { instructions: 'Triage', inputMapping: null }).expect(200);
    expect(cleared.body.inputMapping).to.equal(null);
  });

  it('PUT changes only the fields it sends and makes a secret only when signatures are turned on; unknown ones are 404', async () => {
    const created = await createWebhook({ description: 'Payment events', rateLimitPerMinute: 30 });
    const id = created.webhookId;
    const put = (body: Record<string, unknown>) => admin().put(org.path(`/webhooks/${id}`), body);
    const described = (await put({ description: 'Refund events' }).expect(200)).body;
    expect(described).to.include({
      name: 'Events',
      description: 'Refund events',
      rateLimitPerMinute: 30,
      signatureVerification: false,
    });
    expect(described).to.not.have.property('signingSecret');
    expect((await put({ rateLimitPerMinute: 5 }).expect(200)).body).to.include({
      description: 'Refund events',
      rateLimitPerMinute: 5,
    });
    expect((await put({ rateLimitPerMinute: null }).expect(200)).body).to.include({
      rateLimitPerMinute: null,
    });
    const noRotation = await put({ rotateSigningSecret: true }).expect(400);
    expect(noRotation.body.error.message).to.equal('rotateSigningSecret needs signatureVerification on');
    const turnedOn = (await put({ signatureVerification: true }).expect(200)).body;
    expect(turnedOn.signingSecret).to.match(/^whsec_/);
    const renamed = (await put({ name: 'Renamed' }).expect(200)).body;
    expect(renamed).to.include({
      name: 'Renamed',
      description: 'Refund events',
      signatureVerification: true,
    });
    expect(renamed).to.not.have.property('signingSecret');
    const missing = async (req: request.Test, message: string) =>
      expect((await req.expect(404)).body.error).to.include({ code: 'not_found', message });
    await missing(admin().get(org.path('/webhooks/whk_nope')), 'webhook not found');
    await missing(admin().delete(org.path('/webhooks/whk_nope')), 'webhook not found');
    await missing(admin().get(org.path(`/webhooks/${id}/deliveries/whd_nope`)), 'delivery not found');
  });

  it('deleting a webhook leaves the other webhooks’ handlers and deliveries; the log is newest first; unknown handlers are 404', async () => {
    const chainId = await createChain();
    const body = { handlerType: 'action-chain', actionChainId: chainId, instructions: 'x' };
    const { webhookId: gone } = await createWebhook({ name: 'Gone' });
    const { webhookId: kept } = await createWebhook({ name: 'Kept' });
    await admin()
      .post(org.path(`/webhooks/${gone}/handlers`), body)
      .expect(201);
    const keptHandler = (
      await admin()
        .post(org.path(`/webhooks/${kept}/handlers`), body)
        .expect(201)
    ).body.handlerId as string;
    const webhooks = env.deps.repos.tenant(org.organizationId).webhooks;
    const record = (webhookId: string, deliveryId: string, receivedAt: string) =>
      webhooks.recordDelivery(deliveryId, {
        webhookId,
        eventId: null,
        receivedAt: new Date(receivedAt),
        requestJson: JSON.stringify({ body: {}, headers: {}, queryParams: {} }),
      });
    // recorded oldest first; two at the same instant are in descending id order
    await record(kept, `whd_${kept}_older`, '2026-01-01T10:00:00.000Z');
    await record(kept, `whd_${kept}_same_a`, '2026-01-01T11:00:00.000Z');
    await record(kept, `whd_${kept}_same_b`, '2026-01-01T11:00:00.000Z');
    await record(kept, `whd_${kept}_newest`, '2026-01-01T12:00:00.000Z');
    await record(gone, `whd_${kept}_of_gone`, '2026-01-01T13:00:00.000Z');
    const deliveries = async () =>
      (
        (
          await admin()
            .get(org.path(`/webhooks/${kept}/deliveries`))
            .expect(200)
        ).body.items as Array<{ deliveryId: string }>
      ).map((d) => d.deliveryId);
    const newestFirst = [
      `whd_${kept}_newest`,
      `whd_${kept}_same_b`,
      `whd_${kept}_same_a`,
      `whd_${kept}_older`,
    ];
    expect(await deliveries()).to.deep.equal(newestFirst);
    const handlers = async () =>
      (
        (
          await admin()
            .get(org.path(`/webhooks/${kept}/handlers`))
            .expect(200)
        ).body.items as Array<{ handlerId: string }>
      ).map((h) => h.handlerId);
    expect(await handlers()).to.deep.equal([keptHandler]);
    expect(await webhooks.handlerIds(kept)).to.deep.equal([keptHandler]);

    await admin()
      .delete(org.path(`/webhooks/${gone}`))
      .expect(200, { success: true });
    expect(await handlers()).to.deep.equal([keptHandler]);
    expect(await deliveries()).to.deep.equal(newestFirst);
    // the deleted webhook's handlers and log are gone with it
    expect(await webhooks.handlerIds(gone)).to.deep.equal([]);
    expect(await webhooks.getDelivery(gone, `whd_${kept}_of_gone`)).to.equal(null);

    const missing = async (req: request.Test) =>
      expect((await req.expect(404)).body.error).to.include({
        code: 'not_found',
        message: 'webhook handler not found',
      });
    await missing(admin().get(org.path(`/webhooks/${kept}/handlers/whh_nope`)));
    await missing(admin().delete(org.path(`/webhooks/${kept}/handlers/whh_nope`)));
  });
});
