import { expect } from 'chai';
import type { TriggerHandlerInput, WebhookRequest } from '@contracts';
import { setExpressionLimits } from '@lib/expressions/limits';
import { mapWebhookInput, webhookPlan } from '@lib/webhooks/delivery-plan';
import { ctxOf, ORG, OTHER_ORG, refusal, webhooksWorld, type WebhooksWorld } from './webhooks-world';

/*
 * What a handler does with one delivery (docs/webhooks.md "Handlers"): an action-chain handler's input maps the
 * delivery through Handlebars templates over body, headers, method, path, queryParams and pathParams (a template
 * that is a single {{path}} keeps the value's JSON type; no mapping: the body object); an agent handler opens a
 * conversation whose first message is the instructions and the delivery as JSON (first 20,000 characters).
 */
const request: WebhookRequest = {
  body: { text: 'customer upgraded', count: 3, nested: { flag: true, none: null }, list: [1, 2] },
  headers: { 'x-source': 'crm', 'content-type': 'application/json' },
  method: 'POST',
  path: '/orgs/org_a/webhooks/whk_1/execute',
  queryParams: { ref: '42' },
  pathParams: { organizationId: 'org_a', webhookId: 'whk_1' },
};

describe('webhook input mapping', () => {
  it('without a mapping passes the body when it is a JSON object, else an empty input', () => {
    expect(mapWebhookInput(null, request)).to.deep.equal(request.body);
    for (const body of [null, [1, 2], 'text', 7])
      expect(mapWebhookInput(null, { ...request, body }), JSON.stringify(body)).to.deep.equal({});
  });

  it('keeps the JSON type of a template that is one {{path}}, spaces allowed', () => {
    expect(
      mapWebhookInput(
        {
          count: '{{body.count}}',
          spaced: '{{  body.count }}',
          flag: '{{body.nested.flag}}',
          none: '{{body.nested.none}}',
          list: '{{body.list}}',
          nested: '{{body.nested}}',
          source: '{{headers.x-source}}',
          method: '{{method}}',
          ref: '{{queryParams.ref}}',
          hook: '{{pathParams.webhookId}}',
        },
        request,
      ),
    ).to.deep.equal({
      count: 3,
      spaced: 3,
      flag: true,
      none: null,
      list: [1, 2],
      nested: { flag: true, none: null },
      source: 'crm',
      method: 'POST',
      ref: '42',
      hook: 'whk_1',
    });
  });

  it('leaves out a single path that finds nothing, also through a non-object or an inherited property', () => {
    expect(
      mapWebhookInput(
        {
          missing: '{{body.nope}}',
          deeper: '{{body.text.length}}',
          throughNull: '{{body.nested.none.x}}',
          inherited: '{{body.constructor}}',
          kept: '{{body.count}}',
        },
        request,
      ),
    ).to.deep.equal({ kept: 3 });
  });

  it('renders any other template to text', () => {
    expect(
      mapWebhookInput(
        {
          sentence: 'n={{body.count}}',
          trailing: '{{body.count}} items',
          two: '{{body.count}}{{body.count}}',
          plain: 'fixed',
          block: '{{#if body.nested.flag}}yes{{/if}}',
        },
        request,
      ),
    ).to.deep.equal({ sentence: 'n=3', trailing: '3 items', two: '33', plain: 'fixed', block: 'yes' });
  });

  it('refuses a template that cannot be rendered with 400 naming its key', async () => {
    const err = await refusal(
      Promise.resolve().then(() => mapWebhookInput({ broken: '{{#if body.a}}' }, request)),
    );
    expect(err).to.deep.include({ status: 400, code: 'validation_failed' });
    expect(err.message).to.match(/^inputMapping\.broken could not be rendered: \S/);
  });
});

describe('webhook handler plans', () => {
  const admin = ctxOf('admin', 'usr_admin');
  let w: WebhooksWorld;
  let hookId: string;
  const input = (handlerId: string, over: Partial<TriggerHandlerInput> = {}): TriggerHandlerInput => ({
    organizationId: ORG,
    source: 'webhook',
    parentId: hookId,
    eventKey: 'whd_1',
    handlerId,
    ...over,
  });
  const plan = (i: TriggerHandlerInput) => webhookPlan(w.repos)(i);

  beforeEach(async () => {
    w = webhooksWorld();
    w.chains.set('chn_1', [ORG, 'Triage']);
    w.agents.set('agt_1', [ORG, 'Helper']);
    hookId = (await w.webhooks.create(admin, { name: 'CRM events' })).webhookId;
    await w.repo().recordDelivery('whd_1', { webhookId: hookId, requestJson: JSON.stringify(request) });
  });
  afterEach(() => setExpressionLimits());

  async function chainHandler(inputMapping?: Record<string, string>) {
    const h = await w.handlers.create(admin, hookId, {
      handlerType: 'action-chain',
      actionChainId: 'chn_1',
      instructions: 'Triage',
      inputMapping,
    });
    return h.handlerId;
  }
  async function agentHandler() {
    const h = await w.handlers.create(admin, hookId, {
      handlerType: 'agent',
      agentId: 'agt_1',
      instructions: 'Look at this event',
    });
    return h.handlerId;
  }

  it('runs an action chain with the mapped input, as the handler creator', async () => {
    const id = await chainHandler({ message: '{{body.text}}', count: '{{body.count}}' });
    expect(await plan(input(id))).to.deep.equal({
      handlerType: 'action-chain',
      creatorUserId: 'usr_admin',
      chain: { actionChainId: 'chn_1', payload: { message: 'customer upgraded', count: 3 } },
    });
  });

  it('runs an action chain without a mapping with the body object', async () => {
    const id = await chainHandler();
    expect((await plan(input(id)))?.chain?.payload).to.deep.equal(request.body);
  });

  it('opens a conversation titled by the webhook, its message the instructions and the delivery as JSON', async () => {
    const id = await agentHandler();
    expect(await plan(input(id))).to.deep.equal({
      handlerType: 'agent',
      creatorUserId: 'usr_admin',
      agent: {
        agentId: 'agt_1',
        title: 'CRM events (webhook delivery whd_1)',
        message: `Look at this event\n\nWebhook data (delivery whd_1):\n${JSON.stringify(request, null, 2)}`,
      },
    });
  });

  it('gives an agent the first 20,000 characters of the delivery', async () => {
    const id = await agentHandler();
    const prefix = 'Look at this event\n\nWebhook data (delivery whd_1):\n';
    const big = { ...request, body: 'x'.repeat(30_000) };
    await w.repo().recordDelivery('whd_1', { webhookId: hookId, requestJson: JSON.stringify(big) });
    const message = (await plan(input(id)))!.agent!.message;
    expect(message.length).to.equal(prefix.length + 20_000);
    expect(message.startsWith(`${prefix}{\n  "body": "xxx`)).to.equal(true);
  });

  it('plans nothing when the handler, the delivery, its stored request or the webhook is gone', async () => {
    const chain = await chainHandler();
    const agent = await agentHandler();
    expect(await plan(input('whh_none'))).to.equal(null);
    expect(await plan(input(chain, { eventKey: 'whd_none' }))).to.equal(null);
    await w.repo().noteDuplicate('whd_2', hookId); // a record whose workflow has not stored the request
    expect(await plan(input(chain, { eventKey: 'whd_2' }))).to.equal(null);
    w.tables.webhooks.delete(hookId); // deleted while the delivery ran: an agent handler reads the webhook
    expect(await plan(input(agent))).to.equal(null);
  });

  it("plans nothing for a handler of another webhook or another organization's", async () => {
    const id = await chainHandler();
    const other = (await w.webhooks.create(admin, { name: 'other' })).webhookId;
    await w.repo().recordDelivery('whd_1b', { webhookId: other, requestJson: JSON.stringify(request) });
    expect(await plan(input(id, { parentId: other, eventKey: 'whd_1b' }))).to.equal(null);
    expect(await plan(input(id, { organizationId: OTHER_ORG }))).to.equal(null);
  });

  it('refuses, with the reason, a delivery that makes a mapping go over a rendering budget', async () => {
    const id = await chainHandler({ message: 'text: {{body.text}}' });
    setExpressionLimits({ templateMaxOutputChars: 10 });
    expect(await plan(input(id))).to.deep.equal({
      handlerType: 'action-chain',
      creatorUserId: 'usr_admin',
      refusal:
        'inputMapping.message could not be rendered: the template renders more than 10 characters ' +
        '(limit TEMPLATE_MAX_OUTPUT_CHARS)',
    });
  });
});
