import { conflictOnDuplicate } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import {
  agentKbAttachmentModel,
  agentKbDocId,
  type AgentKbAttachmentDoc,
} from './agent-kb-attachment.schema';

/** Knowledge bases attached to the agents of one organization. */
export class AgentKbAttachmentsRepository extends TenantRepository {
  private readonly model = this.db.model(agentKbAttachmentModel);

  list(agentId: string) {
    return this.model
      .find(this.scope<AgentKbAttachmentDoc>({ agentId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<AgentKbAttachmentDoc[]>();
  }

  /** Throws ConflictError when the knowledge base is already attached. */
  create(fields: Omit<AgentKbAttachmentDoc, '_id' | 'organizationId' | 'createdAt' | 'updatedAt'>) {
    const _id = agentKbDocId(
      this.organizationId,
      fields.agentId,
      fields.kbOrganizationId,
      fields.knowledgeBaseId,
    );
    return conflictOnDuplicate(
      async () =>
        (await this.model.create({ ...fields, _id, organizationId: this.organizationId })).toObject(),
      'this knowledge base is already attached to the agent',
    );
  }

  /** Detaches by knowledge base id, whichever organization owns it. */
  async remove(agentId: string, knowledgeBaseId: string): Promise<boolean> {
    const res = await this.model.deleteMany(this.scope<AgentKbAttachmentDoc>({ agentId, knowledgeBaseId }));
    return res.deletedCount > 0;
  }

  async removeForAgent(agentId: string) {
    await this.model.deleteMany(this.scope<AgentKbAttachmentDoc>({ agentId }));
  }
}
