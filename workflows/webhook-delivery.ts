import type { WebhookDeliveryInput } from '@contracts';
import { startHandlers } from './start-handlers';
import { triggerStore } from './trigger-activity-proxies';

/**
 * One accepted webhook delivery (its start is what made the delivery durable): stores what was received for the
 * delivery log and the handlers, then starts every handler the webhook has as its own workflow, whose id derives
 * from this delivery's.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ handlers: number }> {
  const handlerIds = await triggerStore.recordWebhookDelivery(input);
  const handlers = await startHandlers(
    handlerIds.map((handlerId) => ({
      organizationId: input.organizationId,
      source: 'webhook' as const,
      parentId: input.webhookId,
      eventKey: input.deliveryId,
      handlerId,
    })),
  );
  await triggerStore.markWebhookDispatched(input.organizationId, input.deliveryId, handlerIds.length);
  return { handlers };
}
