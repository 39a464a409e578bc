import type { TriggerHandlerInput, WebhookRequest } from '@contracts';
import { renderTemplate } from '@lib/chains/expressions';
import { AppError, badRequest } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import type { HandlerPlan } from '@lib/triggers/handler-plan';
import type { WebhooksStore } from './store';

/** How much of a delivery an agent handler's first message carries. */
export const WEBHOOK_MESSAGE_LIMIT = 20_000;

/** `{{a.b.c}}` alone: the value at that path, keeping its JSON type (a number stays a number). */
const SINGLE_PATH = /^\{\{\s*([A-Za-z_$][\w$]*(?:\.[\w$-]+)*)\s*\}\}$/;

function valueAt(context: Record<string, unknown>, path: string): unknown {
  let node: unknown = context;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, key))
      return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * A chain handler's input: each mapping value a Handlebars template over the delivery (`body`, `headers`,
 * `method`, `path`, `queryParams`, `pathParams`). A template that is one `{{path}}` keeps the value's JSON type;
 * anything else renders to text. Without a mapping the input is the body when it is a JSON object.
 */
export function mapWebhookInput(
  mapping: Record<string, string> | null,
  request: WebhookRequest,
): Record<string, unknown> {
  const context = request as unknown as Record<string, unknown>;
  if (!mapping) {
    const { body } = request;
    return body !== null && typeof body === 'object' && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  }
  const input: Record<string, unknown> = {};
  for (const [key, template] of Object.entries(mapping)) {
    const single = SINGLE_PATH.exec(template);
    if (single) {
      const value = valueAt(context, single[1]!);
      if (value !== undefined) input[key] = value;
      continue;
    }
    try {
      input[key] = renderTemplate(template, context);
    } catch (err) {
      throw badRequest(`inputMapping.${key} could not be rendered: ${(err as Error).message}`);
    }
  }
  return input;
}

/** What a webhook handler does for one delivery. */
export function webhookPlan(repos: Tenants<WebhooksStore>) {
  return async (input: TriggerHandlerInput): Promise<HandlerPlan | null> => {
    const webhooks = repos.tenant(input.organizationId).webhooks;
    // Deleting a webhook deletes its handlers and deliveries: the handler and the delivery found mean the webhook
    // is there. Only an agent handler reads the webhook itself (its name titles the conversation).
    const [handler, delivery] = await Promise.all([
      webhooks.getHandler(input.parentId, input.handlerId),
      webhooks.getDelivery(input.parentId, input.eventKey),
    ]);
    if (!handler || !delivery?.requestJson) return null;
    const request = JSON.parse(delivery.requestJson) as WebhookRequest;
    const base = { handlerType: handler.handlerType, creatorUserId: handler.creatorUserId };
    if (handler.handlerType === 'agent') {
      const webhook = await webhooks.get(input.parentId);
      if (!webhook) return null;
      const data = JSON.stringify(request, null, 2).slice(0, WEBHOOK_MESSAGE_LIMIT);
      return {
        ...base,
        agent: {
          agentId: handler.agentId!,
          title: `${webhook.name} (webhook delivery ${delivery._id})`,
          message: `${handler.instructions}\n\nWebhook data (delivery ${delivery._id}):\n${data}`,
        },
      };
    }
    const mapping = handler.inputMappingJson
      ? (JSON.parse(handler.inputMappingJson) as Record<string, string>)
      : null;
    let payload: Record<string, unknown>;
    try {
      payload = mapWebhookInput(mapping, request);
    } catch (err) {
      // The same delivery would fail the same way on every retry: the execution fails with the reason.
      if (err instanceof AppError) return { ...base, refusal: err.message };
      throw err;
    }
    return { ...base, chain: { actionChainId: handler.actionChainId!, payload } };
  };
}
