import type { Database } from '@lib/db/connection';
import { agentKbAttachmentModel } from './agent-kb-attachment.schema';
import { kbDocId, knowledgeBaseModel, type KnowledgeBaseDoc } from './knowledge-base.schema';

/** Public knowledge bases are searchable and attachable by every organization: the knowledge-base reads and
 * writes not scoped to one organization. */
export class KnowledgeBasesCrossOrg {
  constructor(private readonly db: Database) {}

  /** Another organization's knowledge base, only when it is public. */
  async findPublicKnowledgeBaseCrossOrg(organizationId: string, knowledgeBaseId: string) {
    const kb = await this.db
      .model(knowledgeBaseModel)
      .findById(kbDocId(organizationId, knowledgeBaseId))
      .lean<KnowledgeBaseDoc>();
    return kb?.isPublic && !kb.deletedAt ? kb : null;
  }

  /** The public knowledge bases of every organization but `exceptOrganizationId` (global search). */
  listPublicKnowledgeBasesCrossOrg(exceptOrganizationId: string) {
    return this.db
      .model(knowledgeBaseModel)
      .find({ isPublic: true, deletedAt: null, organizationId: { $ne: exceptOrganizationId } })
      .lean<KnowledgeBaseDoc[]>();
  }

  /** A deleted knowledge base leaves no attachment behind, in whichever organization's agents hold one. */
  async removeKnowledgeBaseAttachmentsCrossOrg(kbOrganizationId: string, knowledgeBaseId: string) {
    await this.db.model(agentKbAttachmentModel).deleteMany({ kbOrganizationId, knowledgeBaseId });
  }
}
