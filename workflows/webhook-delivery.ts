import { patched } from '@temporalio/workflow';
import type { TriggerHandlerInput, WebhookDeliveryInput } from '@contracts';
import { runHandler } from './run-handler';
import { startHandlers } from './start-handlers';
import { triggerLocal, triggerStore } from './trigger-activity-proxies';

/** Up to this many handlers run as local activities of the delivery's workflow task; more as activities. */
export const LOCAL_HANDLERS_MAX = 10;

/**
 * One accepted webhook delivery (its start is what made the delivery durable): stores what was received for the
 * delivery log and the handlers, then runs every handler the webhook has.
 *
 * Deliveries started before the patch start one child workflow per handler (id derived from this delivery's).
 * Since, the handlers run inline, from this workflow: each handler's execution record (handlerRunId, derived
 * from this delivery and the handler) is what makes it run once, as it already was inside the child workflow;
 * the child only added a workflow start and its tasks per handler. Bookkeeping and, for a few handlers, the
 * handler starts themselves are local activities (no round trip through the Temporal server).
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ handlers: number }> {
  if (!patched('webhook-delivery-inline-handlers')) return withChildWorkflows(input);
  const handlerIds = await triggerLocal.recordWebhookDelivery(input);
  const store = handlerIds.length <= LOCAL_HANDLERS_MAX ? triggerLocal : triggerStore;
  await Promise.all(handlerInputs(input, handlerIds).map((handler) => runHandler(handler, store)));
  await triggerLocal.markWebhookDispatched(input.organizationId, input.deliveryId, handlerIds.length);
  return { handlers: handlerIds.length };
}

function handlerInputs(input: WebhookDeliveryInput, handlerIds: string[]): TriggerHandlerInput[] {
  return handlerIds.map((handlerId) => ({
    organizationId: input.organizationId,
    source: 'webhook' as const,
    parentId: input.webhookId,
    eventKey: input.deliveryId,
    handlerId,
  }));
}

async function withChildWorkflows(input: WebhookDeliveryInput): Promise<{ handlers: number }> {
  const handlerIds = await triggerStore.recordWebhookDelivery(input);
  const handlers = await startHandlers(handlerInputs(input, handlerIds));
  await triggerStore.markWebhookDispatched(input.organizationId, input.deliveryId, handlerIds.length);
  return { handlers };
}
