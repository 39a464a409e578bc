import type { RequestContext } from '@lib/auth/context';
import { badRequest, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { HandlerRunsService } from '@lib/triggers/handler-runs.service';
import { newSigningSecret } from './signature';
import type { WebhooksStore } from './store';
import { toDeliveryView, toWebhookView } from './views';
import type { WebhookFields } from './webhooks.repository';

export interface WebhookBody {
  name?: string;
  description?: string;
  signatureVerification?: boolean;
  rotateSigningSecret?: boolean;
  rateLimitPerMinute?: number | null;
}

/** Webhooks (admins and owners) and their delivery log. */
export class WebhooksService {
  constructor(
    private readonly repos: Tenants<WebhooksStore>,
    private readonly handlerRuns: Pick<HandlerRunsService, 'forEvent' | 'removeFor'>,
    private readonly publicBaseUrl: string,
  ) {}

  private webhooks(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).webhooks;
  }

  async webhook(ctx: RequestContext, webhookId: string) {
    const webhook = await this.webhooks(ctx).get(webhookId);
    if (!webhook) throw notFound('webhook');
    return webhook;
  }

  private view(w: Parameters<typeof toWebhookView>[0], signingSecret?: string) {
    return { ...toWebhookView(w, this.publicBaseUrl), ...(signingSecret ? { signingSecret } : {}) };
  }

  async list(ctx: RequestContext, q: PageRequest) {
    const { items, total } = await this.webhooks(ctx).list(q);
    return page(
      items.map((w) => this.view(w)),
      total,
      q.offset,
    );
  }

  /** With signatureVerification, the answer carries the new `signingSecret`: the only time it is shown. */
  async create(ctx: RequestContext, body: WebhookBody & { name: string }) {
    const signingSecret = body.signatureVerification ? newSigningSecret() : undefined;
    const webhook = await this.webhooks(ctx).create(newId('whk'), ctx.userId, {
      name: body.name,
      description: body.description ?? '',
      signatureVerification: body.signatureVerification ?? false,
      signingSecret: signingSecret ?? null,
      rateLimitPerMinute: body.rateLimitPerMinute ?? null,
    });
    return this.view(webhook, signingSecret);
  }

  async get(ctx: RequestContext, webhookId: string) {
    return this.view(await this.webhook(ctx, webhookId));
  }

  /** Changes what is sent. Turning signatures on, or `rotateSigningSecret`, makes a new secret (shown once). */
  async update(ctx: RequestContext, webhookId: string, body: WebhookBody) {
    const existing = await this.webhook(ctx, webhookId);
    const verify = body.signatureVerification ?? existing.signatureVerification;
    if (body.rotateSigningSecret && !verify)
      throw badRequest('rotateSigningSecret needs signatureVerification on');
    const signingSecret =
      verify && (body.rotateSigningSecret || !existing.signingSecret) ? newSigningSecret() : undefined;
    // A field left out is undefined here, and an update leaves undefined fields as they are.
    const fields: WebhookFields = {
      name: body.name,
      description: body.description,
      rateLimitPerMinute: body.rateLimitPerMinute,
      signatureVerification: verify,
      signingSecret,
    };
    const webhook = await this.webhooks(ctx).update(webhookId, fields);
    if (!webhook) throw notFound('webhook');
    return this.view(webhook, signingSecret);
  }

  /** Deletes the webhook, its handlers, its delivery log and its handlers' execution records. A delivery still in
   * flight finds no webhook and runs nothing more. */
  async remove(ctx: RequestContext, webhookId: string) {
    if (!(await this.webhooks(ctx).remove(webhookId))) throw notFound('webhook');
    await this.handlerRuns.removeFor(ctx.organizationId, webhookId);
    return { success: true as const };
  }

  async listDeliveries(ctx: RequestContext, webhookId: string, q: PageRequest) {
    await this.webhook(ctx, webhookId);
    const { items, total } = await this.webhooks(ctx).listDeliveries(webhookId, q);
    return page(items.map(toDeliveryView), total, q.offset);
  }

  /** One delivery: what was received, and each handler's execution with the status of what it started. */
  async getDelivery(ctx: RequestContext, webhookId: string, deliveryId: string) {
    await this.webhook(ctx, webhookId);
    const delivery = await this.webhooks(ctx).getDelivery(webhookId, deliveryId);
    if (!delivery) throw notFound('delivery');
    const handlerRuns = await this.handlerRuns.forEvent(ctx.organizationId, webhookId, deliveryId);
    return {
      ...toDeliveryView(delivery),
      request: delivery.requestJson ? (JSON.parse(delivery.requestJson) as object) : null,
      handlerRuns,
    };
  }
}
