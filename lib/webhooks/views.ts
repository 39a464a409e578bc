import { iso, pickView } from '@lib/db/view';
import type { TargetNames } from '@lib/schedules/views';
import type { WebhookDeliveryDoc, WebhookDoc, WebhookHandlerDoc } from './webhook.schema';

export function toWebhookView(w: WebhookDoc, publicBaseUrl: string) {
  return {
    webhookId: w._id,
    ...pickView(w, [
      'organizationId',
      'name',
      'description',
      'creatorUserId',
      'signatureVerification',
      'rateLimitPerMinute',
      'handlerCount',
      'createdAt',
      'updatedAt',
    ]),
    executeUrl: `${publicBaseUrl}/orgs/${w.organizationId}/webhooks/${w._id}/execute`,
  };
}

export function toWebhookHandlerView(h: WebhookHandlerDoc, names: TargetNames) {
  return {
    handlerId: h._id,
    ...pickView(h, [
      'webhookId',
      'organizationId',
      'handlerType',
      'agentId',
      'actionChainId',
      'instructions',
      'creatorUserId',
      'createdAt',
      'updatedAt',
    ]),
    agentName: names.agent(h.agentId),
    actionChainName: names.chain(h.actionChainId),
    inputMapping: h.inputMappingJson ? (JSON.parse(h.inputMappingJson) as Record<string, string>) : null,
  };
}

export function toDeliveryView(d: WebhookDeliveryDoc) {
  return {
    deliveryId: d._id,
    ...pickView(d, ['webhookId', 'eventId', 'status', 'handlers', 'duplicates']),
    receivedAt: iso(d.receivedAt ?? d.createdAt),
    lastDuplicateAt: iso(d.lastDuplicateAt),
  };
}
