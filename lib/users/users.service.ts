import { WORKFLOWS, workflowIds, type InvitationWorkflow } from '@contracts';
import type { RequestContext } from '@lib/auth/context';
import { conflictOnDuplicate } from '@lib/db/duplicate-key';
import { AppError, badRequest, conflict, forbidden, invalidReference, notFound } from '@lib/errors';
import { page, type PageRequest } from '@lib/paging';
import type { Repositories } from '@lib/repositories';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import { rooms } from '@lib/realtime/rooms';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import type { MemberDoc, Role } from './member.schema';
import { toMemberView } from './members.repository';

const lastOwner = () => new AppError(409, 'last_owner', 'an organization must keep at least one owner');

export class UsersService {
  constructor(
    private readonly repos: Repositories,
    private readonly temporal: TemporalDeps,
    private readonly realtime: Pick<RealtimeEmitter, 'disconnect'>,
  ) {}

  /** A member whose rights changed or ended: their open sockets reconnect and are authorised afresh. */
  private disconnect(ctx: RequestContext, userId: string) {
    this.realtime.disconnect([rooms.user(ctx.organizationId, userId)]);
  }

  private members(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).members;
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
    const { user, created } = await this.repos.accounts.findOrCreate({
      email: body.email,
      name: body.name,
    });
    const already = `${user.email} is already a member of this organization`;
    if (await members.get(user._id)) throw conflict(already);
    const member = await conflictOnDuplicate(() => members.add(user, body.role), already);
    if (created) await this.invite(ctx, member.userId, user.email, user.name, body.role);
    return toMemberView(member);
  }

  private async invite(ctx: RequestContext, userId: string, email: string, name: string, role: Role) {
    const [org, inviter] = await Promise.all([
      this.repos.tenant(ctx.organizationId).organization.get(),
      this.members(ctx).get(ctx.userId),
    ]);
    await startIdempotent<InvitationWorkflow>(this.temporal, WORKFLOWS.invitation, {
      workflowId: workflowIds.invitation(ctx.organizationId, userId),
      attributes: { organizationId: ctx.organizationId },
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
    // Two owners demoting each other at once must not leave none: check after the write, and undo it.
    if (target.role === 'owner' && (await members.countByRole('owner')) === 0) {
      await members.setRole(userId, 'owner');
      throw lastOwner();
    }
    this.disconnect(ctx, userId);
    return toMemberView(updated);
  }

  /** Removes the membership only; the account and its other memberships stay. */
  async remove(ctx: RequestContext, userId: string, reassignWorkflowsTo?: string) {
    const members = this.members(ctx);
    const target = await members.get(userId);
    if (!target) throw notFound('user');
    if (target.role === 'owner') {
      if (!ctx.capabilities.has('users.manage_owners')) throw forbidden('only owners can delete owners');
      if ((await members.countByRole('owner')) <= 1) throw lastOwner();
    }
    if (reassignWorkflowsTo !== undefined) {
      if (reassignWorkflowsTo === userId) throw badRequest('reassignWorkflowsTo must name another member');
      // A member named in the query: missing is an invalid reference, as for every reference outside the path.
      if (!(await members.get(reassignWorkflowsTo)))
        throw invalidReference('reassignWorkflowsTo', reassignWorkflowsTo);
    }
    if (!(await members.remove(userId))) throw notFound('user');
    // The count above can race with another owner's removal: check again after the write, and undo it.
    if (target.role === 'owner' && (await members.countByRole('owner')) === 0) {
      await members.restore(target);
      throw lastOwner();
    }
    // Workflows are action chains: the removed member's chains go to the member named.
    const reassigned =
      reassignWorkflowsTo !== undefined
        ? await this.repos.tenant(ctx.organizationId).chains.reassign(userId, reassignWorkflowsTo)
        : 0;
    this.disconnect(ctx, userId);
    return { message: 'user removed from organization', userId, reassignedWorkflows: reassigned };
  }

  /** The organization's member `userId`, or null, with no access check: for work done with a member's rights
   * after they set it up (a trigger handler, an app session, an artifact shared with them). */
  member(organizationId: string, userId: string): Promise<MemberDoc | null> {
    return this.repos.tenant(organizationId).members.get(userId);
  }
}
