import { TenantRepository } from '@lib/db/tenant-repository';
import { etlRuleModel, type EtlRuleDoc } from './etl-rule.schema';

export type EtlRuleFields = Pick<EtlRuleDoc, 'etlType' | 'agentId' | 'prompt' | 'workflowId' | 'conditions'>;

/** ETL rules of one organization's knowledge bases. */
export class EtlRulesRepository extends TenantRepository {
  private readonly model = this.db.model(etlRuleModel);

  list(knowledgeBaseId: string) {
    return this.model
      .find(this.scope<EtlRuleDoc>({ knowledgeBaseId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<EtlRuleDoc[]>();
  }

  async get(knowledgeBaseId: string, etlId: string) {
    const rule = await this.findOwned(this.model, etlId);
    return rule?.knowledgeBaseId === knowledgeBaseId ? rule : null;
  }

  async create(etlId: string, knowledgeBaseId: string, creatorUserId: string, fields: EtlRuleFields) {
    const doc = await this.model.create({
      ...fields,
      _id: etlId,
      organizationId: this.organizationId,
      knowledgeBaseId,
      creatorUserId,
    });
    return doc.toObject();
  }

  replace(knowledgeBaseId: string, etlId: string, fields: EtlRuleFields) {
    return this.model
      .findOneAndUpdate(
        { _id: etlId, organizationId: this.organizationId, knowledgeBaseId },
        { $set: fields },
        { new: true },
      )
      .lean<EtlRuleDoc>();
  }

  async remove(knowledgeBaseId: string, etlId: string): Promise<boolean> {
    const res = await this.model.deleteOne({
      _id: etlId,
      organizationId: this.organizationId,
      knowledgeBaseId,
    });
    return res.deletedCount === 1;
  }

  async removeForKnowledgeBase(knowledgeBaseId: string) {
    await this.model.deleteMany(this.scope<EtlRuleDoc>({ knowledgeBaseId }));
  }
}
