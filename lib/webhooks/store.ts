import type { WebhooksRepository } from './webhooks.repository';

/** The webhooks feature's own collections (webhooks, their handlers and deliveries), for one organization. */
export interface WebhooksStore {
  webhooks: WebhooksRepository;
}
