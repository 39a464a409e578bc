import type { GroupAgentMappingDoc } from '@lib/db/group-agent-mapping.schema';
import { findOwned } from './owned';
import { TenantRepository } from './tenant-repository';

export interface UserGroupAgentMappingView {
  userGroupId: string;
  organizationId: string;
  agentId: string;
  agentName: string;
  createdAt: string;
  updatedAt: string;
}

export function toMappingView(m: GroupAgentMappingDoc, agentName: string): UserGroupAgentMappingView {
  return {
    userGroupId: m.userGroupId,
    organizationId: m.organizationId,
    agentId: m.agentId,
    agentName,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
  };
}

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;

/** Group-agent mappings of one organization; every query is scoped to it. */
export class GroupAgentsRepository extends TenantRepository<GroupAgentMappingDoc> {
  list(userGroupId: string) {
    return this.models.GroupAgentMapping.find(this.scope({ userGroupId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean();
  }

  async agentIdsOf(userGroupId: string): Promise<string[]> {
    const rows = await this.models.GroupAgentMapping.find(this.scope({ userGroupId }), { agentId: 1 }).lean();
    return rows.map((r) => r.agentId);
  }

  get(userGroupId: string, agentId: string) {
    return findOwned(
      this.models.GroupAgentMapping,
      `${this.organizationId}:${userGroupId}:${agentId}`,
      this.organizationId,
    );
  }

  /** Creates the mapping, or returns the existing one with `created: false`. */
  async ensure(
    userGroupId: string,
    agentId: string,
  ): Promise<{ mapping: GroupAgentMappingDoc; created: boolean }> {
    try {
      const doc = await this.models.GroupAgentMapping.create({
        _id: `${this.organizationId}:${userGroupId}:${agentId}`,
        organizationId: this.organizationId,
        userGroupId,
        agentId,
      });
      return { mapping: doc.toObject(), created: true };
    } catch (err) {
      const existing = isDuplicateKey(err) ? await this.get(userGroupId, agentId) : null;
      if (!existing) throw err;
      return { mapping: existing, created: false };
    }
  }

  async remove(userGroupId: string, agentId: string): Promise<boolean> {
    const res = await this.models.GroupAgentMapping.deleteOne(this.scope({ userGroupId, agentId }));
    return res.deletedCount === 1;
  }

  async removeForGroup(userGroupId: string) {
    await this.models.GroupAgentMapping.deleteMany(this.scope({ userGroupId }));
  }

  async removeForAgent(agentId: string) {
    await this.models.GroupAgentMapping.deleteMany(this.scope({ agentId }));
  }
}
