import type { RequestContext } from '@lib/auth/context';
import type { Models } from '@lib/db/models';
import type { Role } from '@lib/db/member.schema';
import { AppError, badRequest, conflict, forbidden, notFound } from '@lib/errors';
import { page, type PageRequest } from '@lib/paging';
import { MembersRepository, toMemberView } from '@lib/repositories/members.repository';
import { OrganizationRepository } from '@lib/repositories/organizations.repository';
import { UserAccountsRepository } from '@lib/repositories/users.repository';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import { workflowIds } from '@lib/temporal/workflow-ids';
import type { sendInvitationWorkflow } from '@workflows/invitation';

export class UsersService {
  constructor(
    private readonly models: Models,
    private readonly temporal: TemporalDeps,
  ) {}

  private members(ctx: RequestContext) {
    return new MembersRepository(this.models, ctx.organizationId);
  }

  async list(ctx: RequestContext, opts: { q?: string; role?: Role } & PageRequest) {
    const { items, total } = await this.members(ctx).list(opts);
    return page(items.map(toMemberView), total, opts.offset);
  }

  async get(ctx: RequestContext, userId: string) {
    const member = await this.members(ctx).get(userId);
    if (!member) throw notFound('user');
    return toMemberView(member);
  }

  /** Adds an existing account, or creates one and sends it an invitation through a workflow. */
  async create(ctx: RequestContext, body: { email: string; name: string; role: Role }) {
    if (body.role === 'owner') throw badRequest('role owner cannot be assigned here; use admin or chat');
    const members = this.members(ctx);
    const { user, created } = await new UserAccountsRepository(this.models).findOrCreate({
      email: body.email,
      name: body.name,
    });
    if (await members.get(user._id)) throw conflict(`${user.email} is already a member of this organization`);
    let member;
    try {
      member = await members.add(user, body.role);
    } catch (err) {
      if ((err as { code?: number }).code === 11000)
        throw conflict(`${user.email} is already a member of this organization`);
      throw err;
    }
    if (created) await this.invite(ctx, member.userId, user.email, user.name, body.role);
    return toMemberView(member);
  }

  private async invite(ctx: RequestContext, userId: string, email: string, name: string, role: Role) {
    const [org, inviter] = await Promise.all([
      new OrganizationRepository(this.models, ctx.organizationId).get(),
      this.members(ctx).get(ctx.userId),
    ]);
    await startIdempotent<typeof sendInvitationWorkflow>(this.temporal, 'sendInvitationWorkflow', {
      workflowId: workflowIds.invitation(ctx.organizationId, userId),
      args: [
        {
          organizationId: ctx.organizationId,
          organizationName: org?.name ?? ctx.organizationId,
          userId,
          email,
          name,
          role,
          invitedByName: inviter?.name ?? 'An administrator',
        },
      ],
    });
  }

  async updateRole(ctx: RequestContext, userId: string, role: Role) {
    if (role === 'owner') throw badRequest('role owner cannot be assigned here; use admin or chat');
    if (userId === ctx.userId) throw forbidden('you cannot change your own role');
    const members = this.members(ctx);
    const target = await members.get(userId);
    if (!target) throw notFound('user');
    if (target.role === 'owner' && !ctx.capabilities.has('users.manage_owners')) {
      throw forbidden("only owners can change an owner's role");
    }
    const updated = await members.setRole(userId, role);
    if (!updated) throw notFound('user');
    return toMemberView(updated);
  }

  /** Removes the membership only; the account and its other memberships stay. */
  async remove(ctx: RequestContext, userId: string, reassignWorkflowsTo?: string) {
    const members = this.members(ctx);
    const target = await members.get(userId);
    if (!target) throw notFound('user');
    if (target.role === 'owner') {
      if (!ctx.capabilities.has('users.manage_owners')) throw forbidden('only owners can delete owners');
      const { total } = await members.list({ role: 'owner', limit: 2, offset: 0 });
      if (total <= 1) throw new AppError(409, 'last_owner', 'an organization must keep at least one owner');
    }
    if (reassignWorkflowsTo !== undefined) {
      if (reassignWorkflowsTo === userId) throw badRequest('reassignWorkflowsTo must name another member');
      if (!(await members.get(reassignWorkflowsTo)))
        throw badRequest('reassignWorkflowsTo is not a member of this organization');
      // Workflow ownership is introduced with chains and schedules; they reassign through this hook.
    }
    if (!(await members.remove(userId))) throw notFound('user');
    return { message: 'user removed from organization', userId };
  }
}
