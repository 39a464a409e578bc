import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import { pickView } from '@lib/db/view';
import { newId } from '@lib/ids';
import { containsPattern, type PageRequest } from '@lib/paging';
import { userGroupModel, type UserGroupDoc } from './user-group.schema';

export function toGroupView(g: UserGroupDoc, defaultGroupId: string | null | undefined) {
  return {
    userGroupId: g._id,
    ...pickView(g, ['organizationId', 'name', 'description']),
    isDefault: g._id === defaultGroupId,
    ...pickView(g, ['fullAccess', 'createdAt', 'updatedAt']),
  };
}

export type GroupFields = Pick<UserGroupDoc, 'name' | 'description' | 'fullAccess'>;

/** User groups of one organization; every query is scoped to it. */
export class GroupsRepository extends TenantRepository {
  private readonly model = this.db.model(userGroupModel);

  async list(opts: { q?: string } & PageRequest) {
    const filter = this.scope<UserGroupDoc>(opts.q ? { name: containsPattern(opts.q) } : {});
    return findPage(this.model, filter, { createdAt: 1, _id: 1 }, opts);
  }

  get(id: string) {
    return this.findOwned(this.model, id);
  }

  async create(fields: GroupFields): Promise<UserGroupDoc> {
    const doc = await this.model.create({
      _id: newId('grp'),
      organizationId: this.organizationId,
      ...fields,
    });
    return doc.toObject();
  }

  update(id: string, fields: GroupFields) {
    return this.updateOwned(this.model, id, { $set: fields });
  }

  remove(id: string): Promise<boolean> {
    return this.deleteOwned(this.model, id);
  }
}
