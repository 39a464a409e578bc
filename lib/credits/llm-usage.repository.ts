import { driverCollection } from '@lib/db/connection';
import { TenantRepository } from '@lib/db/tenant-repository';
import { newId, nextSeq } from '@lib/ids';
import { llmUsageModel, type LlmUsageDoc } from './llm-usage.schema';

export type LlmUsageFields = Omit<LlmUsageDoc, '_id' | 'organizationId' | 'createdAt' | 'seq'>;

/** The model calls made for one organization. */
export class LlmUsageRepository extends TenantRepository {
  private readonly model = this.db.model(llmUsageModel);

  /** Every billed model call (each chain step) inserts one: through the driver (see driverCollection), with the
   * fields in schema order and the defaults mongoose would apply. */
  async create(fields: LlmUsageFields): Promise<LlmUsageDoc> {
    const doc: LlmUsageDoc = {
      _id: newId('usage'),
      organizationId: this.organizationId,
      purpose: fields.purpose,
      model: fields.model,
      promptTokens: fields.promptTokens,
      completionTokens: fields.completionTokens,
      usageReported: fields.usageReported,
      cost: fields.cost,
      balanceAfter: fields.balanceAfter,
      userId: fields.userId ?? null,
      reference: fields.reference ?? null,
      seq: nextSeq(),
      createdAt: new Date(),
    };
    await driverCollection(this.model).insertOne(doc);
    return doc;
  }

  /** The newest `limit` calls, newest first. */
  recent(limit: number) {
    return this.model
      .find(this.scope<LlmUsageDoc>())
      .sort({ createdAt: -1, seq: -1 })
      .limit(limit)
      .lean<LlmUsageDoc[]>();
  }
}
