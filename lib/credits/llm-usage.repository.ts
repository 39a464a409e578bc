import { TenantRepository } from '@lib/db/tenant-repository';
import { newId } from '@lib/ids';
import { llmUsageModel, type LlmUsageDoc } from './llm-usage.schema';

export type LlmUsageFields = Omit<LlmUsageDoc, '_id' | 'organizationId' | 'createdAt'>;

/** The model calls made for one organization. */
export class LlmUsageRepository extends TenantRepository {
  private readonly model = this.db.model(llmUsageModel);

  async create(fields: LlmUsageFields): Promise<LlmUsageDoc> {
    const doc = await this.model.create({
      ...fields,
      _id: newId('usage'),
      organizationId: this.organizationId,
    });
    return doc.toObject();
  }

  /** The newest `limit` calls, newest first. */
  recent(limit: number) {
    return this.model
      .find(this.scope<LlmUsageDoc>())
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit)
      .lean<LlmUsageDoc[]>();
  }
}
