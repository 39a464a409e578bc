import type { RequestContext } from '@lib/auth/context';
import { templateProblem } from '@lib/chains/expressions';
import { badRequest, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { HandlerTargets } from '@lib/triggers/handler-targets';
import { MAX_WEBHOOK_HANDLERS, type WebhookHandlerDoc, type WebhookHandlerType } from './webhook.schema';
import type { WebhooksService } from './webhooks.service';
import type { WebhooksStore } from './store';
import { toWebhookHandlerView } from './views';

export interface WebhookHandlerBody {
  handlerType: WebhookHandlerType;
  instructions: string;
  agentId?: string;
  actionChainId?: string;
  inputMapping?: Record<string, string> | null;
}

/** Handlers of webhooks: at most MAX_WEBHOOK_HANDLERS each. */
export class WebhookHandlersService {
  constructor(
    private readonly repos: Tenants<WebhooksStore>,
    private readonly webhooks: WebhooksService,
    private readonly targets: HandlerTargets,
  ) {}

  private repo(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).webhooks;
  }

  private async views(ctx: RequestContext, handlers: WebhookHandlerDoc[]) {
    const names = await this.targets.names(ctx.organizationId, handlers);
    return handlers.map((h) => toWebhookHandlerView(h, names));
  }

  /** The mapping as stored; 400 naming a template that does not parse. */
  private mappingJson(mapping: Record<string, string> | null | undefined): string | null {
    if (!mapping) return null;
    for (const [key, template] of Object.entries(mapping)) {
      const problem = templateProblem(template);
      if (problem) throw badRequest(`inputMapping.${key} is not a valid Handlebars template: ${problem}`);
    }
    return JSON.stringify(mapping);
  }

  async list(ctx: RequestContext, webhookId: string, q: PageRequest) {
    await this.webhooks.webhook(ctx, webhookId);
    const { items, total } = await this.repo(ctx).listHandlers(webhookId, q);
    return page(await this.views(ctx, items), total, q.offset);
  }

  private async handler(ctx: RequestContext, webhookId: string, handlerId: string) {
    await this.webhooks.webhook(ctx, webhookId);
    const handler = await this.repo(ctx).getHandler(webhookId, handlerId);
    if (!handler) throw notFound('webhook handler');
    return handler;
  }

  async get(ctx: RequestContext, webhookId: string, handlerId: string) {
    return (await this.views(ctx, [await this.handler(ctx, webhookId, handlerId)]))[0]!;
  }

  async create(ctx: RequestContext, webhookId: string, body: WebhookHandlerBody) {
    await this.webhooks.webhook(ctx, webhookId);
    let agentId: string | null = null;
    let actionChainId: string | null = null;
    // The contract (WebhookHandlerWrite) lets each type name exactly its own target.
    if (body.handlerType === 'agent') {
      agentId = body.agentId!;
      await this.targets.checkAgent(ctx, agentId);
    } else {
      actionChainId = body.actionChainId!;
      await this.targets.checkChain(ctx, 'actionChainId', actionChainId);
    }
    const inputMappingJson = this.mappingJson(body.inputMapping);
    if (!(await this.repo(ctx).reserveHandler(webhookId)))
      throw badRequest(`a webhook has at most ${MAX_WEBHOOK_HANDLERS} handlers`);
    try {
      const handler = await this.repo(ctx).createHandler(newId('whh'), webhookId, ctx.userId, {
        handlerType: body.handlerType,
        agentId,
        actionChainId,
        instructions: body.instructions,
        inputMappingJson,
      });
      return (await this.views(ctx, [handler]))[0]!;
    } catch (err) {
      await this.repo(ctx).releaseHandler(webhookId);
      throw err;
    }
  }

  /** Stores instructions and inputMapping. */
  async update(
    ctx: RequestContext,
    webhookId: string,
    handlerId: string,
    body: Pick<WebhookHandlerBody, 'instructions' | 'inputMapping'>,
  ) {
    await this.handler(ctx, webhookId, handlerId);
    // An omitted inputMapping keeps the stored one (docs/architecture.md "API conventions"); null clears it.
    const handler = await this.repo(ctx).updateHandler(webhookId, handlerId, {
      instructions: body.instructions,
      ...(body.inputMapping !== undefined ? { inputMappingJson: this.mappingJson(body.inputMapping) } : {}),
    });
    if (!handler) throw notFound('webhook handler');
    return (await this.views(ctx, [handler]))[0]!;
  }

  async remove(ctx: RequestContext, webhookId: string, handlerId: string) {
    await this.webhooks.webhook(ctx, webhookId);
    if (!(await this.repo(ctx).removeHandler(webhookId, handlerId))) throw notFound('webhook handler');
    await this.repo(ctx).releaseHandler(webhookId);
    return { success: true as const };
  }
}
