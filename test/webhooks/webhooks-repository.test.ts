import { expect } from 'chai';
import { orgPerTest } from '@test/helpers/org';
import { rawCollection } from '@test/helpers/store';

/*
 * What the webhooks repository keeps against the real database that the in-memory world cannot show: webhooks
 * and handlers come oldest first (openapi listWebhooks / listWebhookHandlers), ties by id, and so do the handler
 * ids a delivery runs; a handler's place taken or given back is not a change of the webhook, whose updatedAt
 * says when its settings last changed.
 */
const T1 = new Date('2026-01-01T00:00:01.000Z');
const T2 = new Date('2026-01-01T00:00:02.000Z');
const chainHandler = {
  handlerType: 'action-chain' as const,
  agentId: null,
  actionChainId: 'chn_order',
  instructions: 'x',
  inputMappingJson: null,
};

describe('webhooks repository: order and timestamps', function () {
  this.timeout(120_000);
  const world = orgPerTest('Webhook order');
  const repo = () => world.env.deps.repos.tenant(world.org.organizationId).webhooks;

  /** Stored creation times no repository would write: the insertion order is then neither theirs nor the ids'. */
  async function backdate(collection: string, times: Record<string, Date>) {
    for (const [id, createdAt] of Object.entries(times))
      await rawCollection(world.env, collection).updateOne({ _id: id }, { $set: { createdAt } });
  }

  it('lists webhooks oldest first, ties by id, whatever order they were stored in', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((s) => `whk_${world.tag}_${s}`) as [string, string, string];
    for (const id of [b, c, a]) await repo().create(id, world.org.admin.userId, { name: id });
    await backdate('webhooks', { [b]: T2, [c]: T1, [a]: T2 });
    const page = await repo().list({ limit: 10, offset: 0 });
    expect(page.items.map((w) => w._id)).to.deep.equal([c, a, b]);
  });

  it("lists a webhook's handlers and its handler ids oldest first, ties by id", async () => {
    const webhookId = `whk_${world.tag}`;
    await repo().create(webhookId, world.org.admin.userId, { name: 'Events' });
    const [a, b, c] = ['a', 'b', 'c'].map((s) => `whh_${world.tag}_${s}`) as [string, string, string];
    for (const id of [b, c, a])
      await repo().createHandler(id, webhookId, world.org.admin.userId, chainHandler);
    await backdate('webhook_handlers', { [b]: T2, [c]: T1, [a]: T2 });
    const page = await repo().listHandlers(webhookId, { limit: 10, offset: 0 });
    expect(page.items.map((h) => h._id)).to.deep.equal([c, a, b]);
    // the handlers a delivery starts, in the same order
    expect(await repo().handlerIds(webhookId)).to.deep.equal([c, a, b]);
  });

  it("leaves a webhook's updatedAt as it is when a handler place is taken and given back", async () => {
    const webhookId = `whk_${world.tag}`;
    await repo().create(webhookId, world.org.admin.userId, { name: 'Events' });
    await rawCollection(world.env, 'webhooks').updateOne({ _id: webhookId }, { $set: { updatedAt: T1 } });
    expect(await repo().reserveHandler(webhookId)).to.equal(true);
    expect((await repo().get(webhookId))?.handlerCount).to.equal(1);
    await repo().releaseHandler(webhookId);
    const webhook = await repo().get(webhookId);
    expect(webhook?.handlerCount).to.equal(0);
    expect(webhook?.updatedAt).to.deep.equal(T1);
  });
});
