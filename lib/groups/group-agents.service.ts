import type { RequestContext } from '@lib/auth/context';
import { invalidReference, notFound } from '@lib/errors';
import type { Repositories } from '@lib/repositories';
import { toMappingView } from './group-agents.repository';

/** Which agents the members of a group may use (admin or owner; see agent-access.ts for the rule). */
export class GroupAgentsService {
  constructor(private readonly repos: Repositories) {}

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
    const agents = await this.repos.tenant(ctx.organizationId).agents.getMany(mappings.map((m) => m.agentId));
    const names = new Map(agents.map((a) => [a.agentId, a.name]));
    return mappings.filter((m) => names.has(m.agentId)).map((m) => toMappingView(m, names.get(m.agentId)!));
  }

  /** Maps the agent to the group; mapping it again returns the existing mapping (`created: false`). */
  async add(ctx: RequestContext, userGroupId: string, agentId: string) {
    await this.requireGroup(ctx, userGroupId);
    const agent = await this.repos.tenant(ctx.organizationId).agents.findOrMaterialise(agentId);
    if (!agent) throw invalidReference('agentId', agentId);
    const { mapping, created } = await this.repo(ctx).ensure(userGroupId, agentId);
    return { mapping: toMappingView(mapping, agent.name), created };
  }

  async remove(ctx: RequestContext, userGroupId: string, agentId: string) {
    await this.requireGroup(ctx, userGroupId);
    if (!(await this.repo(ctx).remove(userGroupId, agentId))) throw notFound('group-agent mapping');
    return { message: 'agent removed from user group', userGroupId, agentId };
  }
}
