import { conflictOnDuplicate } from '@lib/db/duplicate-key';
import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import type { PageRequest } from '@lib/paging';
import { customTableModel, type CustomTableDoc, type TableFieldDoc } from './custom-table.schema';
import { toFieldView, type FieldView } from './definition';

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
export class TablesRepository extends TenantRepository {
  private readonly model = this.db.model(customTableModel);

  async list(opts: PageRequest) {
    return findPage(this.model, this.scope<CustomTableDoc>(), { name: 1, _id: 1 }, opts);
  }

  getByName(name: string) {
    return this.model.findOne(this.scope<CustomTableDoc>({ name })).lean<CustomTableDoc>();
  }

  /** Throws ConflictError when the name is taken. */
  create(table: NewTable): Promise<CustomTableDoc> {
    return conflictOnDuplicate(
      async () => (await this.model.create({ ...table, organizationId: this.organizationId })).toObject(),
      `a table named '${table.name}' already exists`,
    );
  }

  /** Removes the definition and returns it, so its rows can be dropped. */
  removeByName(name: string) {
    return this.model.findOneAndDelete(this.scope<CustomTableDoc>({ name })).lean<CustomTableDoc>();
  }

  /** Replaces the field list if nobody changed the definition since `table` was read (else null). */
  replaceFields(table: CustomTableDoc, fields: TableFieldDoc[]) {
    return this.model
      .findOneAndUpdate(
        this.scope<CustomTableDoc>({ _id: table._id, schemaVersion: table.schemaVersion }),
        { $set: { fields }, $inc: { schemaVersion: 1 } },
        { new: true },
      )
      .lean<CustomTableDoc>();
  }
}
