import { WorkflowIdReusePolicy } from '@temporalio/client';
import {
  WORKFLOWS,
  workflowIds,
  type WebhookDeliveryInput,
  type WebhookDeliveryWorkflow,
  type WebhookRequest,
} from '@contracts';
import type { Admission } from '@lib/admission/admission';
import type { CredentialCache } from '@lib/auth/credential-cache';
import { notFound, ServiceUnavailableError, unavailableDependency } from '@lib/errors';
import { newId } from '@lib/ids';
import type { Logger } from '@lib/logger';
import type { Tenants } from '@lib/db/tenants';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import { contentDigest, eventDeliveryId, unsignedDeliveryId } from './delivery-ids';
import type { WebhookRateLimiter } from './rate-limit';
import { verifySignature } from './signature';
import type { WebhooksStore } from './store';

export interface WebhookSettings {
  /** accepted deliveries per webhook and minute, unless the webhook sets its own */
  ratePerMinute: number;
  /** how far a signed delivery's timestamp may be from now */
  signatureToleranceSeconds: number;
}

/** Request headers a handler never sees (credentials the sender may forward, the signature itself). */
const HIDDEN_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'webhook-signature']);

/** The headers a delivery passes on to its handlers: every one but the hidden, repeated ones joined. */
export function forwardedHeaders(headers: IncomingDelivery['headers']): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HIDDEN_HEADERS.has(name))
      forwarded[name] = Array.isArray(value) ? value.join(', ') : value;
  return forwarded;
}

export interface IncomingDelivery {
  organizationId: string;
  webhookId: string;
  rawBody: Buffer;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  method: string;
  path: string;
  queryParams: Record<string, unknown>;
}

/**
 * Accepts deliveries to `POST …/webhooks/{webhookId}/execute` (no authentication unless the webhook asks for
 * signatures). A delivery is accepted once its workflow has started: that start is the durable record, so an
 * answered delivery is never lost, and its id derives from the sender's event id (with the content, unless the
 * webhook checks signatures), so a delivery sent again starts nothing.
 */
export class WebhookDeliveriesService {
  constructor(
    private readonly repos: Tenants<WebhooksStore>,
    private readonly temporal: TemporalDeps,
    private readonly limiter: WebhookRateLimiter,
    private readonly admission: Pick<Admission, 'admit' | 'refuseIfFull' | 'startCounted'>,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
    private readonly cache?: Pick<CredentialCache, 'read'>,
  ) {}

  async accept(incoming: IncomingDelivery): Promise<{ duplicate: boolean; deliveryId: string }> {
    const { organizationId, webhookId } = incoming;
    // A full backlog costs its senders one Redis read, not a database read.
    await this.admission.refuseIfFull(organizationId, ['webhook_deliveries', 'chain_runs']);
    const webhooks = this.repos.tenant(organizationId).webhooks;
    // Its signing settings authenticate the delivery: read like credentials, from the cache every change to the
    // webhook empties (WebhooksRepository announces them). The same answer whether the organization or the
    // webhook is missing.
    const load = () => webhooks.get(webhookId);
    const webhook = await (this.cache
      ? this.cache.read(`webhook:${organizationId}:${webhookId}`, load)
      : load());
    if (!webhook) throw notFound('webhook');
    const header = (name: string) => {
      const v = incoming.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const signed = Boolean(webhook.signatureVerification && webhook.signingSecret);
    if (signed)
      verifySignature(
        webhook.signingSecret!,
        {
          id: header('webhook-id'),
          timestamp: header('webhook-timestamp'),
          signature: header('webhook-signature'),
        },
        incoming.rawBody,
        this.settings.signatureToleranceSeconds,
      );
    await this.limiter.take(webhookId, webhook.rateLimitPerMinute ?? this.settings.ratePerMinute);

    const eventId = header('webhook-id') || header('idempotency-key') || null;
    let deliveryId: string;
    if (!eventId) deliveryId = newId('whd');
    else if (signed) deliveryId = eventDeliveryId(webhookId, eventId);
    else {
      const content = contentDigest(incoming.body, incoming.queryParams);
      const legacyId = eventDeliveryId(webhookId, eventId);
      if (await this.takenUnderEventId(organizationId, webhookId, legacyId, content)) {
        await webhooks.noteDuplicate(legacyId, webhookId);
        return { duplicate: true, deliveryId: legacyId };
      }
      deliveryId = unsignedDeliveryId(webhookId, eventId, content);
    }
    const request: WebhookRequest = {
      body: incoming.body ?? null,
      headers: forwardedHeaders(incoming.headers),
      method: incoming.method,
      path: incoming.path,
      queryParams: incoming.queryParams,
      pathParams: { organizationId, webhookId },
    };
    const input: WebhookDeliveryInput = {
      organizationId,
      webhookId,
      deliveryId,
      eventId: eventId ?? null,
      receivedAt: new Date().toISOString(),
      request,
    };
    const workflowId = workflowIds.webhookDelivery(organizationId, webhookId, deliveryId);
    // Room for the delivery and for the chain runs its handlers start (429 beyond the organization's bound).
    const slot = await this.admission.admit(organizationId, 'webhook_deliveries', workflowId, ['chain_runs']);
    let alreadyStarted: boolean;
    try {
      ({ alreadyStarted } = await this.admission.startCounted(
        organizationId,
        'webhook_deliveries',
        workflowId,
        () =>
          startIdempotent<WebhookDeliveryWorkflow>(this.temporal, WORKFLOWS.webhookDelivery, {
            workflowId,
            args: [input],
            attributes: { organizationId, triggerId: webhookId },
            // an event id is accepted once, even after its delivery finished
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          }),
        slot,
      ));
    } catch (err) {
      this.logger.error({ err, organizationId, webhookId }, 'webhook delivery could not be recorded');
      // Whatever failed, the sender must send it again: a 503 either way.
      throw new ServiceUnavailableError(
        unavailableDependency(err) ?? 'temporal',
        undefined,
        'the delivery could not be recorded; send it again',
      );
    }
    if (alreadyStarted) await webhooks.noteDuplicate(deliveryId, webhookId);
    return { duplicate: alreadyStarted, deliveryId };
  }

  /** Stores what a delivery received (for the log and its handlers) and returns the handlers to start; none when
   * the webhook was deleted meanwhile. */
  async record(input: WebhookDeliveryInput): Promise<string[]> {
    const webhooks = this.repos.tenant(input.organizationId).webhooks;
    const [webhook, handlerIds] = await Promise.all([
      webhooks.get(input.webhookId),
      webhooks.handlerIds(input.webhookId),
    ]);
    if (!webhook) return [];
    await webhooks.recordDelivery(input.deliveryId, {
      webhookId: input.webhookId,
      eventId: input.eventId,
      receivedAt: new Date(input.receivedAt),
      requestJson: JSON.stringify(input.request),
    });
    return handlerIds;
  }

  async markDispatched(organizationId: string, deliveryId: string, handlers: number): Promise<void> {
    await this.repos.tenant(organizationId).webhooks.markDispatched(deliveryId, handlers);
  }

  /**
   * Whether this unsigned content was taken under its event id alone: deliveries accepted before the id took the
   * content in (and any signed one) were recorded as `eventDeliveryId`. The same content there is the same
   * delivery, so a sender's retry across the change runs nothing twice. A record whose request is not stored yet
   * (its workflow has not run) cannot be compared: the event id was taken, so it counts as taken. Only signed
   * deliveries write such ids now, so a stranger cannot make one. This lookup can go once Temporal's retention
   * period has passed since the change (REJECT_DUPLICATE never held longer).
   */
  private async takenUnderEventId(
    organizationId: string,
    webhookId: string,
    legacyId: string,
    content: string,
  ): Promise<boolean> {
    const record = await this.repos.tenant(organizationId).webhooks.getDelivery(webhookId, legacyId);
    if (!record) return false;
    if (!record.requestJson) return true;
    const request = JSON.parse(record.requestJson) as Pick<WebhookRequest, 'body' | 'queryParams'>;
    return contentDigest(request.body, request.queryParams) === content;
  }
}
