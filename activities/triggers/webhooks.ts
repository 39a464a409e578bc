import type { WebhookDeliveryInput } from '@contracts';
import type { WebhookDeliveriesService } from '@lib/webhooks/webhook-deliveries.service';

export function createWebhookActivities(deps: {
  deliveries: Pick<WebhookDeliveriesService, 'record' | 'markDispatched'>;
}) {
  return {
    /** Stores what the delivery received (for the log and its handlers) and returns the handlers to start; none
     * when the webhook was deleted meanwhile. */
    recordWebhookDelivery: (input: WebhookDeliveryInput): Promise<string[]> => deps.deliveries.record(input),

    markWebhookDispatched: (organizationId: string, deliveryId: string, handlers: number): Promise<void> =>
      deps.deliveries.markDispatched(organizationId, deliveryId, handlers),
  };
}
