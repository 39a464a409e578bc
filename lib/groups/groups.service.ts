import type { RequestContext } from '@lib/auth/context';
import { iso } from '@lib/db/view';
import { invalidReference, notFound } from '@lib/errors';
import { page, type PageRequest } from '@lib/paging';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import { rooms } from '@lib/realtime/rooms';
import type { Repositories } from '@lib/repositories';
import { toGroupView, type GroupFields } from './groups.repository';

export type GroupBody = GroupFields & { isDefault: boolean };

export class GroupsService {
  constructor(
    private readonly repos: Repositories,
    private readonly realtime: Pick<RealtimeEmitter, 'disconnect'>,
  ) {}

  /** Members whose group changed have other agents now: their sockets reconnect and are authorised afresh. */
  private disconnect(ctx: RequestContext, userIds: string[]) {
    this.realtime.disconnect(userIds.map((userId) => rooms.user(ctx.organizationId, userId)));
  }

  async list(ctx: RequestContext, opts: { q?: string } & PageRequest) {
    const tenant = this.repos.tenant(ctx.organizationId);
    const [{ items, total }, defaultId] = await Promise.all([
      tenant.groups.list(opts),
      tenant.organization.defaultGroupId(),
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
      tenant.organization.defaultGroupId(),
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
    if (body.isDefault) await tenant.organization.setDefaultGroup(group._id);
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
    if (body.isDefault) await tenant.organization.setDefaultGroup(id);
    else await tenant.organization.unsetDefaultGroup(id);
    return this.get(ctx, id);
  }

  /** Deletes the group and its agent mappings; its members fall back to the default group. */
  async remove(ctx: RequestContext, id: string) {
    const tenant = this.repos.tenant(ctx.organizationId);
    if (!(await tenant.groups.remove(id))) throw notFound('user group');
    const moved = await tenant.members.userIdsInGroup(id);
    await Promise.all([
      tenant.organization.unsetDefaultGroup(id),
      tenant.members.clearGroup(id),
      tenant.groupAgents.removeForGroup(id),
    ]);
    this.disconnect(ctx, moved);
    return { message: 'user group deleted', userGroupId: id };
  }

  /** A user is in one group at a time: assigning moves them. */
  async assignUser(ctx: RequestContext, id: string, userId: string) {
    const tenant = this.repos.tenant(ctx.organizationId);
    if (!(await tenant.groups.get(id))) throw notFound('user group');
    const member = await tenant.members.setGroup(userId, id);
    if (!member) throw invalidReference('userId', userId);
    this.disconnect(ctx, [userId]);
    return { organizationId: ctx.organizationId, userGroupId: id, userId, updatedAt: iso(member.updatedAt) };
  }

  /** Whether the organization has the user group, with no access check: an artifact is shared with groups. */
  async exists(organizationId: string, groupId: string): Promise<boolean> {
    return Boolean(await this.repos.tenant(organizationId).groups.get(groupId));
  }
}
