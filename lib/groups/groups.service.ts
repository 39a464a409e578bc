import type { RequestContext } from '@lib/auth/context';
import { iso } from '@lib/db/view';
import { invalidReference, notFound } from '@lib/errors';
import { page, type PageRequest } from '@lib/paging';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import { rooms } from '@lib/realtime/rooms';
import type { Tenants } from '@lib/db/tenants';
import { toGroupView, type GroupFields } from './groups.repository';
import type { GroupsStore } from './store';

export type GroupBody = GroupFields & { isDefault: boolean };

/** Which group each member is in: the users feature (wired in lib/services.ts). */
export interface GroupMembers {
  userIdsInGroup(organizationId: string, userGroupId: string): Promise<string[]>;
  /** Null when there is no such member. */
  setGroup(organizationId: string, userId: string, userGroupId: string): Promise<{ updatedAt: Date } | null>;
  clearGroup(organizationId: string, userGroupId: string): Promise<void>;
}

/** The default group is a field of the organization record: the organization feature (wired in lib/services.ts). */
export interface DefaultGroup {
  defaultGroupId(organizationId: string): Promise<string | null>;
  setDefaultGroup(organizationId: string, userGroupId: string): Promise<void>;
  /** Clears the default only if it is still `userGroupId`. */
  unsetDefaultGroup(organizationId: string, userGroupId: string): Promise<void>;
}

export class GroupsService {
  constructor(
    private readonly repos: Tenants<GroupsStore>,
    private readonly realtime: Pick<RealtimeEmitter, 'disconnect'>,
    private readonly members: GroupMembers,
    private readonly organizations: DefaultGroup,
  ) {}

  /** Members whose group changed have other agents now: their sockets reconnect and are authorised afresh. */
  private disconnect(ctx: RequestContext, userIds: string[]) {
    this.realtime.disconnect(userIds.map((userId) => rooms.user(ctx.organizationId, userId)));
  }

  async list(ctx: RequestContext, opts: { q?: string } & PageRequest) {
    const tenant = this.repos.tenant(ctx.organizationId);
    const [{ items, total }, defaultId] = await Promise.all([
      tenant.groups.list(opts),
      this.organizations.defaultGroupId(ctx.organizationId),
    ]);
    return page(
      items.map((g) => toGroupView(g, defaultId)),
      total,
      opts.offset,
    );
  }

  async get(ctx: RequestContext, id: string) {
    const tenant = this.repos.tenant(ctx.organizationId);
    const [group, defaultId] = await Promise.all([
      tenant.groups.get(id),
      this.organizations.defaultGroupId(ctx.organizationId),
    ]);
    if (!group) throw notFound('user group');
    return toGroupView(group, defaultId);
  }

  async create(ctx: RequestContext, body: GroupBody) {
    const tenant = this.repos.tenant(ctx.organizationId);
    const group = await tenant.groups.create({
      name: body.name,
      description: body.description,
      fullAccess: body.fullAccess,
    });
    if (body.isDefault) await this.organizations.setDefaultGroup(ctx.organizationId, group._id);
    return this.get(ctx, group._id);
  }

  async update(ctx: RequestContext, id: string, body: GroupBody) {
    const tenant = this.repos.tenant(ctx.organizationId);
    const group = await tenant.groups.update(id, {
      name: body.name,
      description: body.description,
      fullAccess: body.fullAccess,
    });
    if (!group) throw notFound('user group');
    if (body.isDefault) await this.organizations.setDefaultGroup(ctx.organizationId, id);
    else await this.organizations.unsetDefaultGroup(ctx.organizationId, id);
    return this.get(ctx, id);
  }

  /** Deletes the group and its agent mappings; its members fall back to the default group. */
  async remove(ctx: RequestContext, id: string) {
    const tenant = this.repos.tenant(ctx.organizationId);
    if (!(await tenant.groups.remove(id))) throw notFound('user group');
    const moved = await this.members.userIdsInGroup(ctx.organizationId, id);
    await Promise.all([
      this.organizations.unsetDefaultGroup(ctx.organizationId, id),
      this.members.clearGroup(ctx.organizationId, id),
      tenant.groupAgents.removeForGroup(id),
    ]);
    this.disconnect(ctx, moved);
    return { message: 'user group deleted', userGroupId: id };
  }

  /** A user is in one group at a time: assigning moves them. */
  async assignUser(ctx: RequestContext, id: string, userId: string) {
    const tenant = this.repos.tenant(ctx.organizationId);
    if (!(await tenant.groups.get(id))) throw notFound('user group');
    const member = await this.members.setGroup(ctx.organizationId, userId, id);
    if (!member) throw invalidReference('userId', userId);
    this.disconnect(ctx, [userId]);
    return { organizationId: ctx.organizationId, userGroupId: id, userId, updatedAt: iso(member.updatedAt) };
  }

  /** Whether the organization has the user group, with no access check: an artifact is shared with groups. */
  async exists(organizationId: string, groupId: string): Promise<boolean> {
    return Boolean(await this.find(organizationId, groupId));
  }

  /** A group by id, or null (the agent access rule). */
  find(organizationId: string, userGroupId: string) {
    return this.repos.tenant(organizationId).groups.get(userGroupId);
  }
}
