import type { CustomTableDoc, TableFieldDoc } from '@lib/db/custom-table.schema';
import type { PageRequest } from '@lib/paging';
import { toFieldView, type FieldView } from '@lib/tables/definition';
import { findPage } from './find-page';
import { TenantRepository } from './tenant-repository';

export interface CustomTableView {
  name: string;
  organizationId: string;
  description: string | null;
  fields: FieldView[];
  creatorUserId: string;
  createdAt: string;
  updatedAt: string;
}

export function toTableView(t: CustomTableDoc): CustomTableView {
  return {
    name: t.name,
    organizationId: t.organizationId,
    description: t.description ?? null,
    fields: t.fields.map(toFieldView),
    creatorUserId: t.creatorUserId,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

export type NewTable = Pick<CustomTableDoc, '_id' | 'name' | 'description' | 'fields' | 'creatorUserId'>;

/** Table definitions of one organization; every query is scoped to it. */
export class TablesRepository extends TenantRepository<CustomTableDoc> {
  async list(opts: PageRequest) {
    const filter = this.scope();
    return findPage(this.models.CustomTable, filter, { name: 1, _id: 1 }, opts);
  }

  getByName(name: string) {
    return this.models.CustomTable.findOne(this.scope({ name })).lean();
  }

  /** Throws the driver's duplicate-key error (code 11000) when the name is taken. */
  async create(table: NewTable): Promise<CustomTableDoc> {
    const doc = await this.models.CustomTable.create({ ...table, organizationId: this.organizationId });
    return doc.toObject();
  }

  /** Removes the definition and returns it, so its rows can be dropped. */
  removeByName(name: string) {
    return this.models.CustomTable.findOneAndDelete(this.scope({ name })).lean();
  }

  /** Replaces the field list if nobody changed the definition since `table` was read (else null). */
  replaceFields(table: CustomTableDoc, fields: TableFieldDoc[]) {
    return this.models.CustomTable.findOneAndUpdate(
      this.scope({ _id: table._id, schemaVersion: table.schemaVersion }),
      { $set: { fields }, $inc: { schemaVersion: 1 } },
      { new: true },
    ).lean();
  }
}
