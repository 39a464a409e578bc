import type { UserGroupDoc } from '@lib/db/user-group.schema';
import { containsPattern, type PageRequest } from '@lib/paging';
import { newId } from '@lib/ids';
import { findPage } from './find-page';
import { findOwned } from './owned';
import { TenantRepository } from './tenant-repository';

export interface UserGroupView {
  userGroupId: string;
  organizationId: string;
  name: string;
  description: string;
  isDefault: boolean;
  fullAccess: boolean;
  createdAt: string;
  updatedAt: string;
}

export function toGroupView(g: UserGroupDoc, defaultGroupId: string | null | undefined): UserGroupView {
  return {
    userGroupId: g._id,
    organizationId: g.organizationId,
    name: g.name,
    description: g.description,
    isDefault: g._id === defaultGroupId,
    fullAccess: g.fullAccess,
    createdAt: g.createdAt.toISOString(),
    updatedAt: g.updatedAt.toISOString(),
  };
}

export type GroupFields = Pick<UserGroupDoc, 'name' | 'description' | 'fullAccess'>;

/** User groups of one organization; every query is scoped to it. */
export class GroupsRepository extends TenantRepository<UserGroupDoc> {
  async list(opts: { q?: string } & PageRequest) {
    const filter = this.scope(opts.q ? { name: containsPattern(opts.q) } : {});
    return findPage(this.models.UserGroup, filter, { createdAt: 1, _id: 1 }, opts);
  }

  get(id: string) {
    return findOwned(this.models.UserGroup, id, this.organizationId);
  }

  async create(fields: GroupFields) {
    const doc = await this.models.UserGroup.create({
      _id: newId('grp'),
      organizationId: this.organizationId,
      ...fields,
    });
    return doc.toObject();
  }

  update(id: string, fields: GroupFields) {
    return this.models.UserGroup.findOneAndUpdate(
      this.scope({ _id: id }),
      { $set: fields },
      { new: true },
    ).lean();
  }

  async remove(id: string): Promise<boolean> {
    const res = await this.models.UserGroup.deleteOne(this.scope({ _id: id }));
    return res.deletedCount === 1;
  }

  /** The default group id lives on the organization record. */
  async defaultGroupId(): Promise<string | null> {
    const org = await this.models.Organization.findById(this.organizationId, {
      defaultUserGroupId: 1,
    }).lean();
    return org?.defaultUserGroupId ?? null;
  }

  async setDefault(id: string) {
    await this.models.Organization.updateOne(
      { _id: this.organizationId },
      { $set: { defaultUserGroupId: id } },
    );
  }

  /** Clears the default only if it is still `id` (a concurrent request may have moved it). */
  async unsetDefault(id: string) {
    await this.models.Organization.updateOne(
      { _id: this.organizationId, defaultUserGroupId: id },
      { $set: { defaultUserGroupId: null } },
    );
  }
}
