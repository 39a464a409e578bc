import { WORKFLOWS, workflowIds, type InvitationWorkflow } from '@contracts';
import type { RequestContext } from '@lib/auth/context';
import { conflictOnDuplicate } from '@lib/db/duplicate-key';
import { AppError, badRequest, conflict, forbidden, invalidReference, notFound } from '@lib/errors';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import { rooms } from '@lib/realtime/rooms';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import type { MemberDoc, Role } from './member.schema';
import { toMemberView } from './members.repository';
import type { UserAccounts, UsersStore } from './store';

/** The organization's name, for invitations: the organization feature (wired in lib/services.ts). */
export interface OrganizationNames {
  find(organizationId: string): Promise<{ name: string } | null>;
}

/** A removed member's chains go to another member: the chains feature (wired in lib/services.ts). */
export interface ChainOwnership {
  /** How many chains moved. */
  reassign(organizationId: string, fromUserId: string, toUserId: string): Promise<number>;
}

const lastOwner = () => new AppError(409, 'last_owner', 'an organization must keep at least one owner');

export class UsersService {
  constructor(
    private readonly repos: Tenants<UsersStore> & UserAccounts,
    private readonly temporal: TemporalDeps,
    private readonly realtime: Pick<RealtimeEmitter, 'disconnect'>,
    private readonly organizations: OrganizationNames,
    private readonly chains: ChainOwnership,
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
      this.organizations.find(ctx.organizationId),
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
        ? await this.chains.reassign(ctx.organizationId, userId, reassignWorkflowsTo)
        : 0;
    this.disconnect(ctx, userId);
    return { message: 'user removed from organization', userId, reassignedWorkflows: reassigned };
  }

  // For other features, which checked their caller already (or, authenticating, are how it is checked).

  /** A user's membership, for another feature's internal use (null when they are not a member). */
  async member(organizationId: string, userId: string): Promise<MemberDoc | null> {
    return this.repos.tenant(organizationId).members.get(userId);
  }

  /** The member whose account has this email address, or null. */
  async memberByEmail(organizationId: string, email: string): Promise<MemberDoc | null> {
    const account = await this.repos.accounts.findByEmail(email);
    return account ? this.repos.tenant(organizationId).members.get(account._id) : null;
  }

  /** A member by our user id or by the organization's own id for them (assume-role's `userId`). */
  findByUserIdOrSourceId(organizationId: string, id: string): Promise<MemberDoc | null> {
    return this.repos.tenant(organizationId).members.findByUserIdOrSourceId(id);
  }

  /**
   * The chat membership of the person with this email, creating the account and the membership as needed
   * (assume-role for an unknown user). The caller's id for the person belongs to this organization's
   * membership, never to the global account. Added concurrently for the same new user: both calls end with
   * the one membership.
   */
  async addChatMember(
    organizationId: string,
    account: { email: string; name: string },
    sourceId: string,
  ): Promise<MemberDoc> {
    const members = this.repos.tenant(organizationId).members;
    const { user } = await this.repos.accounts.findOrCreate(account);
    const member = (await members.ensure({ ...user, sourceId }, 'chat')).doc;
    if (member.userId !== sourceId && !member.sourceId)
      await members.setSourceIdIfUnset(member.userId, sourceId);
    return member;
  }

  /** The first owner of a new organization (lib/organization/bootstrap.service.ts), with their account. */
  async addOwner(organizationId: string, account: { email: string; name: string }) {
    const { user } = await this.repos.accounts.findOrCreate(account);
    await this.repos.tenant(organizationId).members.add(user, 'owner');
    return user;
  }

  /** The account that has this email address, if any (an agent's inbound address must not be one). */
  findAccountByEmail(email: string) {
    return this.repos.accounts.findByEmail(email);
  }

  /**
   * The account of an external identity (OIDC `issuer subject`). At first sign-in only an address the issuer
   * has verified may find the account, which is then linked to the identity.
   */
  async accountOfIdentity(subject: string, verifiedEmail: string | undefined) {
    const { accounts } = this.repos;
    let account = await accounts.findByOidcSubject(subject);
    if (!account && verifiedEmail !== undefined) {
      account = await accounts.findByEmail(verifiedEmail);
      if (account) await accounts.linkOidcSubject(account._id, subject);
      if (account?.oidcSubject && account.oidcSubject !== subject) account = null;
    }
    return account;
  }

  /** The members of a group (lib/groups: to tell them their rights changed). */
  userIdsInGroup(organizationId: string, userGroupId: string): Promise<string[]> {
    return this.repos.tenant(organizationId).members.userIdsInGroup(userGroupId);
  }

  /** Moves a member into a group; null when there is no such member. */
  setGroup(organizationId: string, userId: string, userGroupId: string): Promise<MemberDoc | null> {
    return this.repos.tenant(organizationId).members.setGroup(userId, userGroupId);
  }

  /** The members of a deleted group fall back to the default group. */
  clearGroup(organizationId: string, userGroupId: string): Promise<void> {
    return this.repos.tenant(organizationId).members.clearGroup(userGroupId);
  }
}
