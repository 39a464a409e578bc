import { findOrCreate } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import { pickView } from '@lib/db/view';
import { groupAgentMappingModel, type GroupAgentMappingDoc } from './group-agent-mapping.schema';

export function toMappingView(m: GroupAgentMappingDoc, agentName: string) {
  return {
    ...pickView(m, ['userGroupId', 'organizationId', 'agentId']),
    agentName,
    ...pickView(m, ['createdAt', 'updatedAt']),
  };
}

/** Group-agent mappings of one organization; every query is scoped to it. */
export class GroupAgentsRepository extends TenantRepository {
  private readonly model = this.db.model(groupAgentMappingModel);

  private id(userGroupId: string, agentId: string) {
    return `${this.organizationId}:${userGroupId}:${agentId}`;
  }

  list(userGroupId: string) {
    return this.model
      .find(this.scope<GroupAgentMappingDoc>({ userGroupId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<GroupAgentMappingDoc[]>();
  }

  async agentIdsOf(userGroupId: string): Promise<string[]> {
    const rows = await this.model
      .find(this.scope<GroupAgentMappingDoc>({ userGroupId }), { agentId: 1 })
      .lean<Array<{ agentId: string }>>();
    return rows.map((r) => r.agentId);
  }

  get(userGroupId: string, agentId: string) {
    return this.findOwned(this.model, this.id(userGroupId, agentId));
  }

  /** Creates the mapping, or returns the existing one with `created: false`. */
  async ensure(userGroupId: string, agentId: string) {
    const { doc, created } = await findOrCreate(
      () => this.get(userGroupId, agentId),
      async () => {
        const doc = await this.model.create({
          _id: this.id(userGroupId, agentId),
          organizationId: this.organizationId,
          userGroupId,
          agentId,
        });
        return doc.toObject();
      },
    );
    return { mapping: doc, created };
  }

  remove(userGroupId: string, agentId: string): Promise<boolean> {
    return this.deleteOwned(this.model, this.id(userGroupId, agentId));
  }

  async removeForGroup(userGroupId: string) {
    await this.model.deleteMany(this.scope<GroupAgentMappingDoc>({ userGroupId }));
  }

  async removeForAgent(agentId: string) {
    await this.model.deleteMany(this.scope<GroupAgentMappingDoc>({ agentId }));
  }
}
