import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** At most this many handlers per webhook (spec limit). */
export const MAX_WEBHOOK_HANDLERS = 500;

export const webhookSchema = new Schema(
  {
    /** The webhookId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    name: { type: String, required: true },
    description: { type: String, default: '' },
    creatorUserId: { type: String, required: true },
    /** Deliveries must carry a Standard Webhooks signature made with `signingSecret`. */
    signatureVerification: { type: Boolean, default: false },
    /** `whsec_<base64>`: write-only, shown once when it is made */
    signingSecret: { type: String, default: null },
    /** accepted deliveries per minute; null: the service default */
    rateLimitPerMinute: { type: Number, default: null },
    /** handlers it has: reserved atomically before a handler is stored, so the limit holds under concurrency */
    handlerCount: { type: Number, default: 0 },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the organization's webhooks, oldest first.
webhookSchema.index({ organizationId: 1, createdAt: 1 });

export type WebhookDoc = DocOf<typeof webhookSchema>;
export const webhookModel = defineModel('Webhook', 'webhooks', webhookSchema);

export const WEBHOOK_HANDLER_TYPES = ['agent', 'action-chain'] as const;
export type WebhookHandlerType = (typeof WEBHOOK_HANDLER_TYPES)[number];

export const webhookHandlerSchema = new Schema(
  {
    /** The handlerId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    webhookId: { type: String, required: true },
    handlerType: { type: String, enum: WEBHOOK_HANDLER_TYPES, required: true },
    agentId: { type: String, default: null },
    actionChainId: { type: String, default: null },
    instructions: { type: String, required: true },
    /** chain input name → Handlebars template over the delivery, as JSON text */
    inputMappingJson: { type: String, default: null },
    creatorUserId: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: a webhook's handlers in creation order (list, and the handlers a delivery runs).
webhookHandlerSchema.index({ organizationId: 1, webhookId: 1, createdAt: 1 });

export type WebhookHandlerDoc = DocOf<typeof webhookHandlerSchema>;
export const webhookHandlerModel = defineModel('WebhookHandler', 'webhook_handlers', webhookHandlerSchema);

/** One accepted delivery: what was received (written by its workflow) and how often it was sent again. */
export const webhookDeliverySchema = new Schema(
  {
    /** The deliveryId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    webhookId: { type: String, required: true },
    /** the sender's event id (`webhook-id` or `Idempotency-Key`), when it sent one */
    eventId: { type: String, default: null },
    receivedAt: { type: Date, default: null },
    /** `{ body, headers, method, path, queryParams, pathParams }` as JSON text */
    requestJson: { type: String, default: null },
    status: { type: String, enum: ['received', 'dispatched'], default: 'received' },
    /** handlers the delivery started */
    handlers: { type: Number, default: 0 },
    /** deliveries with the same event id answered `{}` without running anything */
    duplicates: { type: Number, default: 0 },
    lastDuplicateAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: a webhook's delivery log, newest first.
webhookDeliverySchema.index({ organizationId: 1, webhookId: 1, receivedAt: -1 });

export type WebhookDeliveryDoc = DocOf<typeof webhookDeliverySchema>;
export const webhookDeliveryModel = defineModel(
  'WebhookDelivery',
  'webhook_deliveries',
  webhookDeliverySchema,
);
