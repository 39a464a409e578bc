import type { RequestContext } from '@lib/auth/context';
import { invalidReference, notFound } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import { toMappingView } from './group-agents.repository';
import type { GroupsStore } from './store';

interface NamedAgent {
  agentId: string;
  name: string;
}

/** The agents that groups map: the agents feature, above this one (wired in lib/services.ts). */
export interface MappedAgents {
  /** The organization's agents among `agentIds` (no access check: mapping is an admin's). */
  getMany(organizationId: string, agentIds: string[]): Promise<NamedAgent[]>;
  /** The agent, created on first use when its id is a default agent's; null when there is none. */
  findOrMaterialise(organizationId: string, agentId: string): Promise<NamedAgent | null>;
}

/** Which agents the members of a group may use (admin or owner; see agent-access.ts for the rule). */
export class GroupAgentsService {
  constructor(
    private readonly repos: Tenants<GroupsStore>,
    private readonly agents: MappedAgents,
  ) {}

  private async requireGroup(ctx: RequestContext, userGroupId: string) {
    if (!(await this.repos.tenant(ctx.organizationId).groups.get(userGroupId))) {
      throw notFound('user group');
    }
  }

  private repo(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).groupAgents;
  }

  async list(ctx: RequestContext, userGroupId: string) {
    await this.requireGroup(ctx, userGroupId);
    const mappings = await this.repo(ctx).list(userGroupId);
    const agents = await this.agents.getMany(
      ctx.organizationId,
      mappings.map((m) => m.agentId),
    );
    const names = new Map(agents.map((a) => [a.agentId, a.name]));
    return mappings.filter((m) => names.has(m.agentId)).map((m) => toMappingView(m, names.get(m.agentId)!));
  }

  /** Maps the agent to the group; mapping it again returns the existing mapping (`created: false`). */
  async add(ctx: RequestContext, userGroupId: string, agentId: string) {
    await this.requireGroup(ctx, userGroupId);
    const agent = await this.agents.findOrMaterialise(ctx.organizationId, agentId);
    if (!agent) throw invalidReference('agentId', agentId);
    const { mapping, created } = await this.repo(ctx).ensure(userGroupId, agentId);
    return { mapping: toMappingView(mapping, agent.name), created };
  }

  async remove(ctx: RequestContext, userGroupId: string, agentId: string) {
    await this.requireGroup(ctx, userGroupId);
    if (!(await this.repo(ctx).remove(userGroupId, agentId))) throw notFound('group-agent mapping');
    return { message: 'agent removed from user group', userGroupId, agentId };
  }

  // For the agents feature: the access rule reads mappings, and an agent's deletion removes them.

  /** The agents mapped to a group. */
  agentIdsOf(organizationId: string, userGroupId: string): Promise<string[]> {
    return this.repos.tenant(organizationId).groupAgents.agentIdsOf(userGroupId);
  }

  /** The mapping of an agent to a group, or null. */
  mapping(organizationId: string, userGroupId: string, agentId: string) {
    return this.repos.tenant(organizationId).groupAgents.get(userGroupId, agentId);
  }

  async removeForAgent(organizationId: string, agentId: string): Promise<void> {
    await this.repos.tenant(organizationId).groupAgents.removeForAgent(agentId);
  }
}
