import { patched, workflowInfo } from '@temporalio/workflow';
import type { TriggerHandlerInput, WebhookDeliveryInput } from '@contracts';
import { runExecution } from './chain-run';
import { runHandler } from './run-handler';
import { startHandlers } from './start-handlers';
import { triggerLocal, triggerStore } from './trigger-activity-proxies';

/** Up to this many handlers run as local activities of the delivery's workflow task; more as activities. */
export const LOCAL_HANDLERS_MAX = 10;

/**
 * One accepted webhook delivery (its start is what made the delivery durable): stores what was received for the
 * delivery log and the handlers, then runs every handler the webhook has.
 *
 * Three shapes, newest first (each patched() call that holds records a marker and a search attribute upsert, so a
 * new delivery checks one):
 * - since `webhook-delivery-inline-chain`: the handlers run from this workflow, and the chain of a webhook's only
 *   handler runs in it too (onlyHandler);
 * - since `webhook-delivery-inline-handlers`: the handlers run from this workflow; each handler's execution record
 *   (handlerRunId, derived from this delivery and the handler) is what makes it run once, as it already was
 *   inside the child workflow, which only added a workflow start and its tasks per handler. Bookkeeping and, for
 *   a few handlers, the handler starts themselves are local activities (no round trip through the Temporal
 *   server);
 * - before: one child workflow per handler (id derived from this delivery's).
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ handlers: number }> {
  if (patched('webhook-delivery-inline-chain')) {
    const handlerIds = await triggerLocal.recordWebhookDelivery(input);
    if (handlerIds.length === 1) return onlyHandler(input, handlerIds[0]!);
    return runAll(input, handlerIds);
  }
  if (!patched('webhook-delivery-inline-handlers')) return withChildWorkflows(input);
  return runAll(input, await triggerLocal.recordWebhookDelivery(input));
}

async function runAll(input: WebhookDeliveryInput, handlerIds: string[]): Promise<{ handlers: number }> {
  const store = handlerIds.length <= LOCAL_HANDLERS_MAX ? triggerLocal : triggerStore;
  await Promise.all(handlerInputs(input, handlerIds).map((handler) => runHandler(handler, store)));
  await triggerLocal.markWebhookDispatched(input.organizationId, input.deliveryId, handlerIds.length);
  return { handlers: handlerIds.length };
}

/**
 * A delivery to a webhook with one handler. When it is a chain handler this workflow runs the chain run's first
 * execution itself, as chainRunWorkflow would under its own id: a delivery then costs one workflow, not two (the
 * run's record names this workflow, so a re-run that supersedes the execution cancels it). An agent handler
 * starts its conversation as it does with more handlers. The activity that runs the handler also marks the
 * delivery dispatched; a handler that could not be started is marked here.
 */
async function onlyHandler(input: WebhookDeliveryInput, handlerId: string): Promise<{ handlers: number }> {
  const [handler] = handlerInputs(input, [handlerId]);
  const { workflowId } = workflowInfo();
  let dispatched = false;
  const outcome = await runHandler(handler!, {
    runTriggerHandler: async (i) => {
      const ran = await triggerLocal.dispatchOnlyWebhookHandler(i, workflowId);
      dispatched = true;
      return ran;
    },
    failTriggerHandler: triggerLocal.failTriggerHandler,
  });
  if (!dispatched) await triggerLocal.markWebhookDispatched(input.organizationId, input.deliveryId, 1);
  if (outcome.status === 'started' && outcome.execution) await runExecution(outcome.execution, true);
  return { handlers: 1 };
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
