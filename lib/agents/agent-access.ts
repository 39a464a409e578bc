import type { RequestContext } from '@lib/auth/context';
import { notFound } from '@lib/errors';
import type { UserGroupDoc } from '@lib/groups/user-group.schema';
import type { Tenants } from '@lib/db/tenants';
import type { AgentDoc } from './agent.schema';
import { defaultAgent } from './default-agents';
import type { AgentsStore } from './store';

/** What the rule reads of other features: members, groups and their mappings, the organization's default
 * group. Those features sit below agents (groups name agents through their own port); lib/services.ts wires
 * their services in. */
export interface AccessRecords {
  users: { member(organizationId: string, userId: string): Promise<{ userGroupId?: string | null } | null> };
  groups: { find(organizationId: string, userGroupId: string): Promise<UserGroupDoc | null> };
  groupAgents: {
    agentIdsOf(organizationId: string, userGroupId: string): Promise<string[]>;
    /** Null when the agent is not mapped to the group. */
    mapping(organizationId: string, userGroupId: string, agentId: string): Promise<unknown>;
  };
  organizations: { defaultGroupId(organizationId: string): Promise<string | null> };
}

/*
 * The agent access rule (spec "User groups"): a caller may use an agent when
 *   - their role is owner, or
 *   - their user group has fullAccess, or
 *   - a mapping exists between their user group and the agent.
 * A member with no group (userGroupId null, or a group that no longer exists) is in the organization's
 * default group; with no group and no default group only owners reach agents. Admins follow the group rule
 * like everyone else; what they may do beyond it (list all, manage) is decided by their capabilities at the
 * call site. Assume-role tokens carry role chat, so they follow the group rule of their user. API keys act
 * as their creator.
 */
export class AgentAccess {
  constructor(
    private readonly repos: Tenants<AgentsStore>,
    private readonly records: AccessRecords,
  ) {}

  /** The group whose rights the caller has, or null. */
  private async effectiveGroup(ctx: RequestContext): Promise<UserGroupDoc | null> {
    const { organizationId } = ctx;
    const groupId =
      ctx.userGroupId !== undefined
        ? ctx.userGroupId
        : (await this.records.users.member(organizationId, ctx.userId))?.userGroupId;
    const own = groupId ? await this.records.groups.find(organizationId, groupId) : null;
    if (own) return own;
    const defaultId = await this.records.organizations.defaultGroupId(organizationId);
    return defaultId ? this.records.groups.find(organizationId, defaultId) : null;
  }

  /** The id of the group whose rights the caller has (their own, else the default group), or null. */
  async effectiveGroupId(ctx: RequestContext): Promise<string | null> {
    return (await this.effectiveGroup(ctx))?._id ?? null;
  }

  /** The agents the caller may use: `undefined` means every agent of the organization. */
  async accessibleAgentIds(ctx: RequestContext): Promise<string[] | undefined> {
    if (ctx.role === 'owner') return undefined;
    const group = await this.effectiveGroup(ctx);
    if (!group) return [];
    if (group.fullAccess) return undefined;
    return this.records.groupAgents.agentIdsOf(ctx.organizationId, group._id);
  }

  /** Whether the caller may use this agent (the agent itself is not looked up). */
  async canAccessAgent(ctx: RequestContext, agentId: string): Promise<boolean> {
    if (ctx.role === 'owner') return true;
    const mapping = (userGroupId: string) =>
      this.records.groupAgents.mapping(ctx.organizationId, userGroupId, agentId);
    // The caller's own group is known from their credentials: its mapping is read alongside the group (one
    // round trip, not two); it counts only if that group turns out to be the effective one.
    const ownMapping = ctx.userGroupId ? mapping(ctx.userGroupId) : undefined;
    ownMapping?.catch(() => undefined); // awaited below, or not needed; must not be left unhandled
    const group = await this.effectiveGroup(ctx);
    if (!group) return false;
    if (group.fullAccess) return true;
    return (await (group._id === ctx.userGroupId ? ownMapping! : mapping(group._id))) !== null;
  }

  /**
   * The agent if the caller may use it. A default agent id (`default-assistant`, …) creates that agent on
   * first use. Absent and inaccessible agents both throw the same 404, so access reveals nothing.
   */
  async getAccessibleAgent(ctx: RequestContext, agentId: string): Promise<AgentDoc> {
    const agents = this.repos.tenant(ctx.organizationId).agents;
    // Access first: a caller who may not use an agent never causes a default agent to be created. Any other
    // agent is only read, so it is read alongside the access check.
    const read = defaultAgent(agentId) ? undefined : agents.get(agentId);
    read?.catch(() => undefined); // awaited below; a refused caller must not leave it unhandled
    const agent =
      (await this.canAccessAgent(ctx, agentId)) && (await (read ?? agents.findOrMaterialise(agentId)));
    if (!agent) throw notFound('agent');
    return agent;
  }
}
