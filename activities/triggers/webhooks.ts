import type { TriggerHandlerInput, TriggerHandlerOutcome, WebhookDeliveryInput } from '@contracts';
import type { TriggerHandlers } from '@lib/triggers/trigger-handlers';
import type { WebhookDeliveriesService } from '@lib/webhooks/webhook-deliveries.service';

export function createWebhookActivities(deps: {
  deliveries: Pick<WebhookDeliveriesService, 'record' | 'markDispatched'>;
  handlers: Pick<TriggerHandlers, 'run'>;
}) {
  return {
    /** Stores what the delivery received (for the log and its handlers) and returns the handlers to start; none
     * when the webhook was deleted meanwhile. */
    recordWebhookDelivery: (input: WebhookDeliveryInput): Promise<string[]> => deps.deliveries.record(input),

    markWebhookDispatched: (organizationId: string, deliveryId: string, handlers: number): Promise<void> =>
      deps.deliveries.markDispatched(organizationId, deliveryId, handlers),

    /** Runs a delivery's only handler and marks the delivery dispatched. A chain handler's run is created, not
     * started: its first execution comes back for the delivery's workflow (`workflowId`) to run itself
     * (TriggerHandlers.run with `inlineIn`). */
    dispatchOnlyWebhookHandler: async (
      input: TriggerHandlerInput,
      workflowId: string,
    ): Promise<TriggerHandlerOutcome> => {
      const outcome = await deps.handlers.run(input, workflowId);
      await deps.deliveries.markDispatched(input.organizationId, input.eventKey, 1);
      return outcome;
    },
  };
}
