import { expect } from 'chai';
import { ctxOf, ORG, OTHER_ORG, refusal, webhooksWorld, type WebhooksWorld } from './webhooks-world';

/*
 * Webhook handlers (docs/webhooks.md "Handlers", openapi createWebhookHandler / updateWebhookHandler): the target
 * a handler names must exist and be usable, at most 500 handlers per webhook (the 501st is 400), a mapping
 * template that does not parse is 400 naming its key, and an omitted inputMapping keeps the stored one.
 */
const admin = ctxOf('admin', 'usr_admin');
const stranger = ctxOf('admin', 'usr_other', OTHER_ORG);
const page = { limit: 20, offset: 0 };
const chainHandler = { handlerType: 'action-chain' as const, actionChainId: 'chn_1', instructions: 'Triage' };

describe('webhook handlers service', () => {
  let w: WebhooksWorld;
  let hookId: string;
  beforeEach(async () => {
    w = webhooksWorld();
    w.chains.set('chn_1', [ORG, 'Triage chain']);
    w.agents.set('agt_1', [ORG, 'Helper']);
    w.chains.set('chn_b', [OTHER_ORG, 'Theirs']);
    w.agents.set('agt_b', [OTHER_ORG, 'Theirs']);
    hookId = (await w.webhooks.create(admin, { name: 'CRM events' })).webhookId;
  });

  describe('create', () => {
    it('stores an action-chain handler with its mapping and shows the chain by name', async () => {
      const mapping = { message: '{{body.text}}', source: '{{headers.x-source}}' };
      const h = await w.handlers.create(admin, hookId, { ...chainHandler, inputMapping: mapping });
      expect(h).to.deep.equal({
        handlerId: h.handlerId,
        webhookId: hookId,
        organizationId: ORG,
        handlerType: 'action-chain',
        agentId: null,
        actionChainId: 'chn_1',
        instructions: 'Triage',
        creatorUserId: 'usr_admin',
        createdAt: '2026-01-01T00:00:02.000Z',
        updatedAt: '2026-01-01T00:00:02.000Z',
        agentName: null,
        actionChainName: 'Triage chain',
        inputMapping: mapping,
      });
      expect(h.handlerId).to.match(/^whh_/);
      expect(w.tables.handlers.get(h.handlerId)?.inputMappingJson).to.equal(JSON.stringify(mapping));
      expect(w.tables.webhooks.get(hookId)?.handlerCount).to.equal(1);
    });

    it('stores an agent handler with the agent by name and no mapping', async () => {
      const h = await w.handlers.create(admin, hookId, {
        handlerType: 'agent',
        agentId: 'agt_1',
        instructions: 'Look at this',
      });
      expect(h).to.deep.include({
        handlerType: 'agent',
        agentId: 'agt_1',
        agentName: 'Helper',
        actionChainId: null,
        actionChainName: null,
        inputMapping: null,
      });
    });

    it("refuses a chain or agent that is not the organization's (400 invalid_reference), storing nothing", async () => {
      expect(
        await refusal(w.handlers.create(admin, hookId, { ...chainHandler, actionChainId: 'chn_b' })),
      ).to.deep.equal({
        status: 400,
        code: 'invalid_reference',
        message: 'actionChainId: chn_b does not exist or is not visible to you',
      });
      expect(
        await refusal(
          w.handlers.create(admin, hookId, { handlerType: 'agent', agentId: 'agt_b', instructions: 'x' }),
        ),
      ).to.deep.equal({
        status: 400,
        code: 'invalid_reference',
        message: 'agentId: agt_b does not exist or is not visible to you',
      });
      expect(w.tables.handlers.size).to.equal(0);
      expect(w.tables.webhooks.get(hookId)?.handlerCount).to.equal(0);
    });

    it('refuses a mapping template that does not parse, naming its key, before taking a place', async () => {
      const err = await refusal(
        w.handlers.create(admin, hookId, {
          ...chainHandler,
          inputMapping: { ok: '{{body.a}}', bad: '{{#if x}}' },
        }),
      );
      expect(err).to.deep.include({ status: 400, code: 'validation_failed' });
      expect(err.message).to.match(/^inputMapping\.bad is not a valid Handlebars template: \S/);
      expect(w.tables.handlers.size).to.equal(0);
      expect(w.tables.webhooks.get(hookId)?.handlerCount).to.equal(0);
    });

    it('takes the 500th handler and refuses the 501st with 400', async () => {
      w.tables.webhooks.get(hookId)!.handlerCount = 499;
      await w.handlers.create(admin, hookId, chainHandler);
      expect(await refusal(w.handlers.create(admin, hookId, chainHandler))).to.deep.equal({
        status: 400,
        code: 'validation_failed',
        message: 'a webhook has at most 500 handlers',
      });
      expect(w.tables.handlers.size).to.equal(1);
      expect(w.tables.webhooks.get(hookId)?.handlerCount).to.equal(500);
    });

    it('gives the place back when the handler cannot be stored', async () => {
      w.repo().failCreateHandler = new Error('database gone');
      expect(await refusal(w.handlers.create(admin, hookId, chainHandler))).to.deep.include({
        message: 'database gone',
      });
      expect(w.tables.webhooks.get(hookId)?.handlerCount).to.equal(0);
    });

    it("answers 404 for an unknown webhook or another organization's", async () => {
      const missing = { status: 404, code: 'not_found', message: 'webhook not found' };
      expect(await refusal(w.handlers.create(admin, 'whk_none', chainHandler))).to.deep.equal(missing);
      expect(await refusal(w.handlers.create(stranger, hookId, chainHandler))).to.deep.equal(missing);
      expect(await refusal(w.handlers.list(stranger, hookId, page))).to.deep.equal(missing);
      expect(w.tables.handlers.size).to.equal(0);
    });
  });

  describe('read, update and delete', () => {
    let handlerId: string;
    beforeEach(async () => {
      handlerId = (
        await w.handlers.create(admin, hookId, { ...chainHandler, inputMapping: { a: '{{body.a}}' } })
      ).handlerId;
    });

    it('lists and gets the handlers of one webhook only', async () => {
      const other = (await w.webhooks.create(admin, { name: 'other' })).webhookId;
      await w.handlers.create(admin, other, chainHandler);
      const listed = await w.handlers.list(admin, hookId, page);
      expect(listed.items.map((h) => h.handlerId)).to.deep.equal([handlerId]);
      expect(listed).to.deep.include({ totalRows: 1, offset: 0 });
      expect((await w.handlers.get(admin, hookId, handlerId)).actionChainName).to.equal('Triage chain');
      expect(await refusal(w.handlers.get(admin, other, handlerId))).to.deep.equal({
        status: 404,
        code: 'not_found',
        message: 'webhook handler not found',
      });
    });

    it('updates the instructions and keeps the mapping when inputMapping is left out', async () => {
      const h = await w.handlers.update(admin, hookId, handlerId, { instructions: 'New' });
      expect(h).to.deep.include({ instructions: 'New', inputMapping: { a: '{{body.a}}' } });
    });

    it('replaces the mapping when one is sent, and clears it with null', async () => {
      const replaced = await w.handlers.update(admin, hookId, handlerId, {
        instructions: 'x',
        inputMapping: { b: '{{body.b}}' },
      });
      expect(replaced.inputMapping).to.deep.equal({ b: '{{body.b}}' });
      const cleared = await w.handlers.update(admin, hookId, handlerId, {
        instructions: 'x',
        inputMapping: null,
      });
      expect(cleared.inputMapping).to.equal(null);
      expect(w.tables.handlers.get(handlerId)?.inputMappingJson).to.equal(null);
    });

    it('refuses an update whose template does not parse and keeps the stored handler', async () => {
      const err = await refusal(
        w.handlers.update(admin, hookId, handlerId, { instructions: 'x', inputMapping: { c: '{{/if}}' } }),
      );
      expect(err).to.deep.include({ status: 400, code: 'validation_failed' });
      expect(err.message).to.match(/^inputMapping\.c is not a valid Handlebars template: \S/);
      expect(w.tables.handlers.get(handlerId)).to.deep.include({ instructions: 'Triage' });
    });

    it('answers 404 for an unknown handler on update and delete', async () => {
      const missing = { status: 404, code: 'not_found', message: 'webhook handler not found' };
      expect(
        await refusal(w.handlers.update(admin, hookId, 'whh_none', { instructions: 'x' })),
      ).to.deep.equal(missing);
      expect(await refusal(w.handlers.remove(admin, hookId, 'whh_none'))).to.deep.equal(missing);
      expect(w.tables.webhooks.get(hookId)?.handlerCount).to.equal(1);
    });

    it('answers 404 when the handler is deleted while an update is under way', async () => {
      // the delete lands between the update's check and its write
      const repo = w.repo();
      const write = repo.updateHandler.bind(repo);
      repo.updateHandler = async (...args: Parameters<typeof write>) => {
        await w.handlers.remove(admin, hookId, handlerId);
        return write(...args);
      };
      expect(await refusal(w.handlers.update(admin, hookId, handlerId, { instructions: 'x' }))).to.deep.equal(
        {
          status: 404,
          code: 'not_found',
          message: 'webhook handler not found',
        },
      );
    });

    it('deletes a handler and gives its place back', async () => {
      expect(await w.handlers.remove(admin, hookId, handlerId)).to.deep.equal({ success: true });
      expect(w.tables.handlers.size).to.equal(0);
      expect(w.tables.webhooks.get(hookId)?.handlerCount).to.equal(0);
    });

    it("never reads, changes or deletes another organization's handler", async () => {
      const missing = { status: 404, code: 'not_found', message: 'webhook not found' };
      expect(await refusal(w.handlers.get(stranger, hookId, handlerId))).to.deep.equal(missing);
      expect(
        await refusal(w.handlers.update(stranger, hookId, handlerId, { instructions: 'x' })),
      ).to.deep.equal(missing);
      expect(await refusal(w.handlers.remove(stranger, hookId, handlerId))).to.deep.equal(missing);
      expect(w.tables.handlers.get(handlerId)).to.deep.include({ instructions: 'Triage' });
    });
  });
});
