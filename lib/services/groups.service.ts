import type { RequestContext } from '@lib/auth/context';
import type { Models } from '@lib/db/models';
import { notFound } from '@lib/errors';
import { page, type PageRequest } from '@lib/paging';
import { GroupAgentsRepository } from '@lib/repositories/group-agents.repository';
import { GroupsRepository, toGroupView, type GroupFields } from '@lib/repositories/groups.repository';
import { MembersRepository } from '@lib/repositories/members.repository';

export type GroupBody = GroupFields & { isDefault: boolean };

export class GroupsService {
  constructor(private readonly models: Models) {}

  private repo(ctx: RequestContext) {
    return new GroupsRepository(this.models, ctx.organizationId);
  }

  async list(ctx: RequestContext, opts: { q?: string } & PageRequest) {
    const repo = this.repo(ctx);
    const [{ items, total }, defaultId] = await Promise.all([repo.list(opts), repo.defaultGroupId()]);
    return page(
      items.map((g) => toGroupView(g, defaultId)),
      total,
      opts.offset,
    );
  }

  async get(ctx: RequestContext, id: string) {
    const repo = this.repo(ctx);
    const [group, defaultId] = await Promise.all([repo.get(id), repo.defaultGroupId()]);
    if (!group) throw notFound('user group');
    return toGroupView(group, defaultId);
  }

  async create(ctx: RequestContext, body: GroupBody) {
    const repo = this.repo(ctx);
    const group = await repo.create({
      name: body.name,
      description: body.description,
      fullAccess: body.fullAccess,
    });
    if (body.isDefault) await repo.setDefault(group._id);
    return this.get(ctx, group._id);
  }

  async update(ctx: RequestContext, id: string, body: GroupBody) {
    const repo = this.repo(ctx);
    const group = await repo.update(id, {
      name: body.name,
      description: body.description,
      fullAccess: body.fullAccess,
    });
    if (!group) throw notFound('user group');
    if (body.isDefault) await repo.setDefault(id);
    else await repo.unsetDefault(id);
    return this.get(ctx, id);
  }

  /** Deletes the group and its agent mappings; its members fall back to the default group. */
  async remove(ctx: RequestContext, id: string) {
    const repo = this.repo(ctx);
    if (!(await repo.remove(id))) throw notFound('user group');
    await Promise.all([
      repo.unsetDefault(id),
      new MembersRepository(this.models, ctx.organizationId).clearGroup(id),
      new GroupAgentsRepository(this.models, ctx.organizationId).removeForGroup(id),
    ]);
    return { message: 'user group deleted', userGroupId: id };
  }

  /** A user is in one group at a time: assigning moves them. */
  async assignUser(ctx: RequestContext, id: string, userId: string) {
    if (!(await this.repo(ctx).get(id))) throw notFound('user group');
    const member = await new MembersRepository(this.models, ctx.organizationId).setGroup(userId, id);
    if (!member) throw notFound('user');
    return {
      organizationId: ctx.organizationId,
      userGroupId: id,
      userId,
      updatedAt: member.updatedAt.toISOString(),
    };
  }
}
