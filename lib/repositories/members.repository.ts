import type { MemberDoc, Role } from '@lib/db/member.schema';
import { containsPattern, type PageRequest } from '@lib/paging';
import { deleteOwned, findOwned, updateOwned } from './owned';
import { findPage } from './find-page';
import { TenantRepository } from './tenant-repository';

export interface MemberView {
  organizationId: string;
  userId: string;
  role: Role;
  name: string;
  email: string;
  sourceId: string | null;
  userGroupId: string | null;
  createdAt: string;
  updatedAt: string;
}

export function toMemberView(m: MemberDoc): MemberView {
  return {
    organizationId: m.organizationId,
    userId: m.userId,
    role: m.role,
    name: m.name,
    email: m.email,
    sourceId: m.sourceId ?? null,
    userGroupId: m.userGroupId ?? null,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
  };
}

/** One membership per (organization, user): the pair is the primary key. */
export const memberDocId = (organizationId: string, userId: string) => `${organizationId}:${userId}`;

/** Members of one organization; every query is scoped to it. */
export class MembersRepository extends TenantRepository<MemberDoc> {
  async list(opts: { q?: string; role?: Role } & PageRequest) {
    const filter = this.scope();
    if (opts.role) filter.role = opts.role;
    if (opts.q) filter.$or = [{ name: containsPattern(opts.q) }, { email: containsPattern(opts.q) }];
    return findPage(this.models.Member, filter, { createdAt: 1, _id: 1 }, opts);
  }

  /** Read on every authenticated request: by primary key. */
  get(userId: string) {
    return findOwned(this.models.Member, memberDocId(this.organizationId, userId), this.organizationId);
  }

  /** Finds a member by our user id or by the caller's identifier for them (sourceId). */
  async findByUserIdOrSourceId(id: string) {
    return (await this.get(id)) ?? this.models.Member.findOne(this.scope({ sourceId: id })).lean();
  }

  async add(user: { _id: string; name: string; email: string; sourceId?: string }, role: Role) {
    const doc = await this.models.Member.create({
      _id: memberDocId(this.organizationId, user._id),
      organizationId: this.organizationId,
      userId: user._id,
      role,
      name: user.name,
      email: user.email,
      sourceId: user.sourceId,
    });
    return doc.toObject();
  }

  setRole(userId: string, role: Role) {
    return updateOwned(this.models.Member, memberDocId(this.organizationId, userId), this.organizationId, {
      $set: { role },
    });
  }

  setGroup(userId: string, userGroupId: string) {
    return updateOwned(this.models.Member, memberDocId(this.organizationId, userId), this.organizationId, {
      $set: { userGroupId },
    });
  }

  async clearGroup(userGroupId: string) {
    await this.models.Member.updateMany(this.scope({ userGroupId }), { $set: { userGroupId: null } });
  }

  remove(userId: string): Promise<boolean> {
    return deleteOwned(this.models.Member, memberDocId(this.organizationId, userId), this.organizationId);
  }
}
