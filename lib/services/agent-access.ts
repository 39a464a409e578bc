import type { FilterQuery } from 'mongoose';
import type { RequestContext } from '@lib/auth/context';
import type { AgentDoc } from '@lib/db/agent.schema';
import type { Models } from '@lib/db/models';
import type { UserGroupDoc } from '@lib/db/user-group.schema';
import { notFound } from '@lib/errors';
import { AgentsRepository } from '@lib/repositories/agents.repository';
import { GroupAgentsRepository } from '@lib/repositories/group-agents.repository';
import { GroupsRepository } from '@lib/repositories/groups.repository';
import { MembersRepository } from '@lib/repositories/members.repository';

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

/** The group whose rights the caller has, or null. */
async function effectiveGroup(models: Models, ctx: RequestContext): Promise<UserGroupDoc | null> {
  const groups = new GroupsRepository(models, ctx.organizationId);
  const member = await new MembersRepository(models, ctx.organizationId).get(ctx.userId);
  const own = member?.userGroupId ? await groups.get(member.userGroupId) : null;
  if (own) return own;
  const defaultId = await groups.defaultGroupId();
  return defaultId ? groups.get(defaultId) : null;
}

/** The agents the caller may use: `undefined` means every agent of the organization. */
export async function accessibleAgentIds(models: Models, ctx: RequestContext): Promise<string[] | undefined> {
  if (ctx.role === 'owner') return undefined;
  const group = await effectiveGroup(models, ctx);
  if (!group) return [];
  if (group.fullAccess) return undefined;
  return new GroupAgentsRepository(models, ctx.organizationId).agentIdsOf(group._id);
}

/** A filter on agent documents (to combine with the organization scope) selecting the accessible ones. */
export async function accessibleAgentFilter(
  models: Models,
  ctx: RequestContext,
): Promise<FilterQuery<AgentDoc>> {
  const ids = await accessibleAgentIds(models, ctx);
  return ids === undefined ? {} : { agentId: { $in: ids } };
}

/** Whether the caller may use this agent (the agent itself is not looked up). */
export async function canAccessAgent(models: Models, ctx: RequestContext, agentId: string): Promise<boolean> {
  if (ctx.role === 'owner') return true;
  const group = await effectiveGroup(models, ctx);
  if (!group) return false;
  if (group.fullAccess) return true;
  return (await new GroupAgentsRepository(models, ctx.organizationId).get(group._id, agentId)) !== null;
}

/**
 * The agent if the caller may use it. A default agent id (`default-assistant`, …) creates that agent on first
 * use. Absent and inaccessible agents both throw the same 404, so access reveals nothing.
 */
export async function getAccessibleAgent(
  models: Models,
  ctx: RequestContext,
  agentId: string,
): Promise<AgentDoc> {
  // Access first: a caller who may not use an agent never causes a default agent to be created.
  const agent =
    (await canAccessAgent(models, ctx, agentId)) &&
    (await new AgentsRepository(models, ctx.organizationId).findOrMaterialise(agentId));
  if (!agent) throw notFound('agent');
  return agent;
}
