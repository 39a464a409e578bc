import { findPage } from '@lib/db/find-page';
import { findOrCreate } from '@lib/db/duplicate-key';
import { CredentialRepository } from '@lib/db/tenant-repository';
import { pickView } from '@lib/db/view';
import { containsPattern, type PageRequest } from '@lib/paging';
import { memberModel, type MemberDoc, type Role } from './member.schema';

export function toMemberView(m: MemberDoc) {
  return pickView(m, [
    'organizationId',
    'userId',
    'role',
    'name',
    'email',
    'sourceId',
    'userGroupId',
    'createdAt',
    'updatedAt',
  ]);
}
export type MemberView = ReturnType<typeof toMemberView>;

/** One membership per (organization, user): the pair is the primary key. */
export const memberDocId = (organizationId: string, userId: string) => `${organizationId}:${userId}`;

type NewMember = { _id: string; name: string; email: string; sourceId?: string | null };

/** Members of one organization; every query is scoped to it, and every write announced (the role authorizes). */
export class MembersRepository extends CredentialRepository {
  private readonly model = this.db.model(memberModel);

  private id(userId: string) {
    return memberDocId(this.organizationId, userId);
  }

  async list(opts: { q?: string; role?: Role } & PageRequest) {
    const filter = this.scope<MemberDoc>();
    if (opts.role) filter.role = opts.role;
    if (opts.q) filter.$or = [{ name: containsPattern(opts.q) }, { email: containsPattern(opts.q) }];
    return findPage(this.model, filter, { createdAt: 1, _id: 1 }, opts);
  }

  /** Read on every authenticated request: by primary key. */
  get(userId: string) {
    return this.findOwned(this.model, this.id(userId));
  }

  /** Finds a member by our user id or by the caller's identifier for them (sourceId). */
  async findByUserIdOrSourceId(id: string) {
    return (
      (await this.get(id)) ?? this.model.findOne(this.scope<MemberDoc>({ sourceId: id })).lean<MemberDoc>()
    );
  }

  /** Throws the driver's duplicate-key error when the user is already a member; ensure() gets or adds. */
  async add(user: NewMember, role: Role): Promise<MemberDoc> {
    const doc = await this.write(() =>
      this.model.create({
        _id: this.id(user._id),
        organizationId: this.organizationId,
        userId: user._id,
        role,
        name: user.name,
        email: user.email,
        sourceId: user.sourceId ?? undefined,
      }),
    );
    return doc.toObject();
  }

  /** The membership of `user`, adding it with `role` when absent (also under concurrent requests). */
  ensure(user: NewMember, role: Role) {
    return findOrCreate(
      () => this.get(user._id),
      () => this.add(user, role),
    );
  }

  countByRole(role: Role): Promise<number> {
    return this.model.countDocuments(this.scope<MemberDoc>({ role }));
  }

  /** The users in a group (to tell them their rights changed). */
  async userIdsInGroup(userGroupId: string): Promise<string[]> {
    const rows = await this.model
      .find(this.scope<MemberDoc>({ userGroupId }), { userId: 1 })
      .lean<Array<{ userId: string }>>();
    return rows.map((r) => r.userId);
  }

  /** Puts back a membership removed a moment ago (a removal that had to be undone). */
  async restore(member: MemberDoc) {
    await findOrCreate(
      () => this.get(member.userId),
      async () => (await this.write(() => this.model.create(member))).toObject(),
    );
  }

  setRole(userId: string, role: Role) {
    return this.write(() => this.updateOwned(this.model, this.id(userId), { $set: { role } }));
  }

  /** Records the organization's own id for the member (assume-role's `userId`) if none is recorded yet. */
  async setSourceIdIfUnset(userId: string, sourceId: string) {
    await this.write(() =>
      this.model.updateOne(
        { _id: this.id(userId), organizationId: this.organizationId, sourceId: null },
        { $set: { sourceId } },
      ),
    );
  }

  setGroup(userId: string, userGroupId: string) {
    return this.write(() => this.updateOwned(this.model, this.id(userId), { $set: { userGroupId } }));
  }

  async clearGroup(userGroupId: string) {
    await this.write(() =>
      this.model.updateMany(this.scope<MemberDoc>({ userGroupId }), { $set: { userGroupId: null } }),
    );
  }

  remove(userId: string): Promise<boolean> {
    return this.write(() => this.deleteOwned(this.model, this.id(userId)));
  }
}
