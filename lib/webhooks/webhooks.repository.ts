import { findPage } from '@lib/db/find-page';
import { CredentialRepository } from '@lib/db/tenant-repository';
import type { PageRequest } from '@lib/paging';
import {
  MAX_WEBHOOK_HANDLERS,
  webhookDeliveryModel,
  webhookHandlerModel,
  webhookModel,
  type WebhookDeliveryDoc,
  type WebhookDoc,
  type WebhookHandlerDoc,
} from './webhook.schema';

export type WebhookFields = Partial<
  Pick<WebhookDoc, 'name' | 'description' | 'signatureVerification' | 'signingSecret' | 'rateLimitPerMinute'>
>;
export type WebhookHandlerFields = Pick<
  WebhookHandlerDoc,
  'handlerType' | 'agentId' | 'actionChainId' | 'instructions' | 'inputMappingJson'
>;

/**
 * Webhooks of one organization, their handlers and their delivery log. A webhook's signing settings authenticate
 * its deliveries, so a change to the webhook itself is announced like a change to credentials (the API reads it
 * through the credential cache); its handlers and deliveries are not.
 */
export class WebhooksRepository extends CredentialRepository {
  private readonly model = this.db.model(webhookModel);
  private readonly handlerModel = this.db.model(webhookHandlerModel);
  private readonly deliveryModel = this.db.model(webhookDeliveryModel);

  get(webhookId: string) {
    return this.findOwned(this.model, webhookId);
  }

  list(page: PageRequest) {
    return findPage(this.model, this.scope<WebhookDoc>(), { createdAt: 1, _id: 1 }, page);
  }

  async create(webhookId: string, creatorUserId: string, fields: WebhookFields & { name: string }) {
    const doc = await this.model.create({
      ...fields,
      _id: webhookId,
      organizationId: this.organizationId,
      creatorUserId,
    });
    return doc.toObject();
  }

  update(webhookId: string, fields: WebhookFields) {
    return this.write(() => this.updateOwned(this.model, webhookId, { $set: fields }));
  }

  /** Deletes the webhook with its handlers and its delivery log. */
  async remove(webhookId: string): Promise<boolean> {
    const removed = await this.write(() => this.deleteOwned(this.model, webhookId));
    if (removed) {
      await this.handlerModel.deleteMany(this.scope<WebhookHandlerDoc>({ webhookId }));
      await this.deliveryModel.deleteMany(this.scope<WebhookDeliveryDoc>({ webhookId }));
    }
    return removed;
  }

  /** Takes one of the webhook's MAX_WEBHOOK_HANDLERS handler places; false when none is left. */
  async reserveHandler(webhookId: string): Promise<boolean> {
    const res = await this.model.updateOne(
      { _id: webhookId, organizationId: this.organizationId, handlerCount: { $lt: MAX_WEBHOOK_HANDLERS } },
      { $inc: { handlerCount: 1 } },
      { timestamps: false },
    );
    return res.modifiedCount === 1;
  }

  async releaseHandler(webhookId: string) {
    await this.model.updateOne(
      { _id: webhookId, organizationId: this.organizationId },
      { $inc: { handlerCount: -1 } },
      { timestamps: false },
    );
  }

  async getHandler(webhookId: string, handlerId: string) {
    const doc = await this.findOwned(this.handlerModel, handlerId);
    return doc?.webhookId === webhookId ? doc : null;
  }

  listHandlers(webhookId: string, page: PageRequest) {
    return findPage(
      this.handlerModel,
      this.scope<WebhookHandlerDoc>({ webhookId }),
      { createdAt: 1, _id: 1 },
      page,
    );
  }

  async handlerIds(webhookId: string): Promise<string[]> {
    const docs = await this.handlerModel
      .find(this.scope<WebhookHandlerDoc>({ webhookId }))
      .sort({ createdAt: 1, _id: 1 })
      .select({ _id: 1 })
      .lean<Array<{ _id: string }>>();
    return docs.map((d) => d._id);
  }

  async createHandler(
    handlerId: string,
    webhookId: string,
    creatorUserId: string,
    fields: WebhookHandlerFields,
  ) {
    const doc = await this.handlerModel.create({
      ...fields,
      _id: handlerId,
      organizationId: this.organizationId,
      webhookId,
      creatorUserId,
    });
    return doc.toObject();
  }

  updateHandler(
    webhookId: string,
    handlerId: string,
    fields: Pick<WebhookHandlerDoc, 'instructions'> & Partial<Pick<WebhookHandlerDoc, 'inputMappingJson'>>,
  ) {
    return this.handlerModel
      .findOneAndUpdate(
        { _id: handlerId, organizationId: this.organizationId, webhookId },
        { $set: fields },
        { new: true },
      )
      .lean<WebhookHandlerDoc>();
  }

  async removeHandler(webhookId: string, handlerId: string): Promise<boolean> {
    const res = await this.handlerModel.deleteOne({
      _id: handlerId,
      organizationId: this.organizationId,
      webhookId,
    });
    return res.deletedCount === 1;
  }

  getDelivery(webhookId: string, deliveryId: string) {
    return this.findOwned(this.deliveryModel, deliveryId).then((d) =>
      d?.webhookId === webhookId ? d : null,
    );
  }

  listDeliveries(webhookId: string, page: PageRequest) {
    return findPage(
      this.deliveryModel,
      this.scope<WebhookDeliveryDoc>({ webhookId }),
      { receivedAt: -1, _id: -1 },
      page,
    );
  }

  /** Stores what a delivery received (its workflow's first step; a retry writes the same). */
  async recordDelivery(
    deliveryId: string,
    fields: Pick<WebhookDeliveryDoc, 'webhookId' | 'eventId' | 'receivedAt' | 'requestJson'>,
  ) {
    await this.deliveryModel.updateOne(
      { _id: deliveryId, organizationId: this.organizationId },
      { $set: fields, $setOnInsert: { organizationId: this.organizationId } },
      { upsert: true },
    );
  }

  async markDispatched(deliveryId: string, handlers: number) {
    await this.deliveryModel.updateOne(
      { _id: deliveryId, organizationId: this.organizationId },
      { $set: { status: 'dispatched', handlers } },
    );
  }

  /** A delivery sent again with the same event id: counted, nothing run. */
  async noteDuplicate(deliveryId: string, webhookId: string) {
    await this.deliveryModel.updateOne(
      { _id: deliveryId, organizationId: this.organizationId },
      {
        $inc: { duplicates: 1 },
        $set: { lastDuplicateAt: new Date() },
        $setOnInsert: { organizationId: this.organizationId, webhookId },
      },
      { upsert: true },
    );
  }
}
