import { apiKeyModel, type ApiKeyDoc } from '@lib/api-keys/api-key.schema';
import { agentEmailModel, type AgentEmailDoc } from '@lib/agents/agent-email.schema';
import { agentModel, type AgentDoc } from '@lib/agents/agent.schema';
import { newId } from '@lib/ids';
import { agentKbAttachmentModel } from '@lib/knowledge-bases/agent-kb-attachment.schema';
import {
  kbDocId,
  knowledgeBaseModel,
  type KnowledgeBaseDoc,
} from '@lib/knowledge-bases/knowledge-base.schema';
import { organizationModel, type OrganizationDoc } from '@lib/organization/organization.schema';
import { scheduleTriggerModel, type ScheduleTriggerDoc } from '@lib/schedules/schedule-trigger.schema';
import { readById, type Database } from './connection';
import { isDuplicateKey } from './duplicate-key';

/**
 * The only reads and writes that are not scoped to one organization, each for a reason named here. Anything
 * else goes through a TenantRepository.
 */
export class CrossOrgRepository {
  constructor(private readonly db: Database) {}

  /** Authentication has only the key, not the organization: the key carries its record id. */
  findApiKeyCrossOrg(apiKeyId: string) {
    return readById(this.db.model(apiKeyModel), apiKeyId) as Promise<ApiKeyDoc | null>;
  }

  /** The agent that owns an inbound address, in any organization: addresses route mail, so they are global. */
  findAgentByEmailCrossOrg(emailAddress: string) {
    return this.db
      .model(agentModel)
      .findOne({ emailAddressKey: emailAddress.toLowerCase() })
      .lean<AgentDoc>();
  }

  /**
   * Claims an inbound address for an agent. Addresses route mail across organizations, so they are global;
   * false when another agent holds it (the claim is the insert of its key, atomic on the primary key).
   */
  async claimAgentEmailCrossOrg(
    address: string,
    organizationId: string,
    agentDocId: string,
  ): Promise<boolean> {
    const model = this.db.model(agentEmailModel);
    const _id = address.toLowerCase();
    try {
      await model.create({ _id, organizationId, agentDocId });
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await model.findById(_id).lean<AgentEmailDoc>())?.agentDocId === agentDocId;
    }
  }

  /** Who holds an inbound address (organization and agentDocId), or null: routes inbound mail by primary key. */
  findAgentEmailCrossOrg(address: string) {
    return this.db.model(agentEmailModel).findById(address.toLowerCase()).lean<AgentEmailDoc>();
  }

  /** Gives an address up, if this agent holds it. */
  async releaseAgentEmailCrossOrg(address: string, agentDocId: string) {
    await this.db.model(agentEmailModel).deleteOne({ _id: address.toLowerCase(), agentDocId });
  }

  /** Creating a tenant is the one organization write with no tenant yet (bootstrap CLI). */
  async createOrganizationCrossOrg(name: string): Promise<OrganizationDoc> {
    const doc = await this.db
      .model(organizationModel)
      .create({ _id: newId('org'), name, pendingChanges: [] });
    return doc.toObject();
  }

  /** Another organization's knowledge base, only when it is public: public ones are searchable and attachable
   * by every organization. */
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

  /** The schedule reconciler sweeps every organization: triggers whose Temporal Schedule may not match their
   * record yet, changed before `before` (a write newer than that is still being synced by its request). */
  listScheduleTriggersToSyncCrossOrg(before: Date, limit: number) {
    return this.db
      .model(scheduleTriggerModel)
      .find({ syncPending: true, updatedAt: { $lt: before } })
      .sort({ updatedAt: 1 })
      .limit(limit)
      .select({ _id: 1, organizationId: 1 })
      .lean<Array<Pick<ScheduleTriggerDoc, '_id' | 'organizationId'>>>();
  }
}
