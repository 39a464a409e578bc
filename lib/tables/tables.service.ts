import type { RequestContext } from '@lib/auth/context';
import { badRequest, conflict, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { CustomTableDoc } from './custom-table.schema';
import { checkFieldName, checkName, normalizeFields, type FieldInput } from './definition';
import { buildRowFilter } from './filters';
import { DD_FIELD_NAME_PATTERN, TABLE_LIMITS } from './limits';
import { parseOrderBy } from './order-by';
import { describeProblems, RowChecker } from './rows';
import { columnPaths, type StoredRow } from './storage';
import type { TablesStore } from './store';
import { toTableView } from './tables.repository';
import type { ColumnType } from './values';

/** Who acts: a request context, or an activity acting for an organization (userId: the acting user or agent). */
export type TableCaller = Pick<RequestContext, 'organizationId' | 'userId'>;

export interface CreateTableBody {
  name: string;
  description?: string;
  fields: FieldInput[];
}

export interface RowQuery extends PageRequest {
  orderBy?: string;
  filters?: string;
}

export interface BatchResult {
  inserted: number;
  failed: number;
  errors: Array<{ index: number; error: string }>;
  ids: number[];
}

function columnTypes(table: CustomTableDoc): Map<string, ColumnType> {
  return new Map<string, ColumnType>([
    ['id', 'id'],
    ...table.fields.map((f) => [f.name, f.type] as [string, ColumnType]),
  ]);
}

/**
 * Custom tables of an organization: definitions, rows, columns. Role checks happen at the route
 * (`x-capability`); everything else (names, types, limits, tenancy) is enforced here, so an activity can
 * call this service directly with the organization it acts for.
 */
export class TablesService {
  constructor(
    private readonly repos: Tenants<TablesStore>,
    /** How long one row query may run (MongoDB maxTimeMS). */
    private readonly queryTimeoutMs: number,
    /** How much stored row data one page may hold (TABLE_PAGE_MAX_BYTES; its default unless given). */
    private readonly pageMaxBytes = 32 * 1024 * 1024,
  ) {}

  private defs(caller: TableCaller) {
    return this.repos.tenant(caller.organizationId).tables;
  }

  private async load(caller: TableCaller, tableName: string): Promise<CustomTableDoc> {
    const table = await this.defs(caller).getByName(tableName);
    if (!table) throw notFound('table');
    return table;
  }

  private rows(caller: TableCaller, table: CustomTableDoc) {
    return this.repos.tenant(caller.organizationId).tableRows(table);
  }

  async list(caller: TableCaller, opts: PageRequest) {
    const { items, total } = await this.defs(caller).list(opts);
    return page(items.map(toTableView), total, opts.offset);
  }

  async get(caller: TableCaller, tableName: string) {
    return toTableView(await this.load(caller, tableName));
  }

  async create(caller: TableCaller, body: CreateTableBody) {
    const name = checkName(body.name, 'name');
    const fields = normalizeFields(body.fields);
    const table = await this.defs(caller).create({
      _id: newId('tbl'),
      name,
      description: body.description ?? null,
      fields,
      creatorUserId: caller.userId,
    });
    try {
      await this.rows(caller, table).createStorage(fields);
    } catch (err) {
      await this.defs(caller).removeByName(name);
      throw err;
    }
    return toTableView(table);
  }

  /** Deletes the definition first (the table is gone at once), then its rows and id counter. */
  async remove(caller: TableCaller, tableName: string) {
    const table = await this.defs(caller).removeByName(tableName);
    if (!table) throw notFound('table');
    await this.rows(caller, table).dropStorage();
    return { organizationId: caller.organizationId, tableName: table.name };
  }

  async listRows(caller: TableCaller, tableName: string, query: RowQuery) {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > TABLE_LIMITS.maxPageSize) {
      throw badRequest(`limit must be an integer from 1 to ${TABLE_LIMITS.maxPageSize}`);
    }
    if (!Number.isInteger(query.offset) || query.offset < 0)
      throw badRequest('offset must be an integer of at least 0');
    const table = await this.load(caller, tableName);
    const columns = columnTypes(table);
    const pathOf = columnPaths(table.fields);
    const filter = buildRowFilter(query.filters, columns, pathOf);
    const sort = parseOrderBy(query.orderBy, columns, pathOf);
    const { items, total } = await this.rows(caller, table).list(filter, sort, {
      offset: query.offset,
      limit: query.limit,
      maxTimeMS: this.queryTimeoutMs,
      maxBytes: this.pageMaxBytes,
    });
    const rows = new RowChecker(table.fields);
    return page(
      items.map((row) => rows.view(row)),
      total,
      query.offset,
    );
  }

  async insertRow(caller: TableCaller, tableName: string, data: unknown) {
    const table = await this.load(caller, tableName);
    const checker = new RowChecker(table.fields);
    const check = checker.insert(data);
    if (!check.ok) throw badRequest(describeProblems(check.problems), check.problems);
    const rows = this.rows(caller, table);
    const row: StoredRow = { _id: await rows.reserveIds(1), d: check.values };
    await rows.insertMany([row]);
    return checker.view(row);
  }

  /**
   * Inserts the valid rows of a batch with one id reservation; invalid rows are skipped and reported by
   * zero-based index. Ids follow input order.
   */
  async insertRows(caller: TableCaller, tableName: string, data: unknown[]): Promise<BatchResult> {
    if (data.length > TABLE_LIMITS.maxBatchRows) {
      throw badRequest(`a batch holds at most ${TABLE_LIMITS.maxBatchRows} rows; got ${data.length}`);
    }
    const table = await this.load(caller, tableName);
    const checker = new RowChecker(table.fields);
    const valid: Array<Record<string, unknown>> = [];
    const errors: BatchResult['errors'] = [];
    data.forEach((item, index) => {
      const check = checker.insert(item);
      if (check.ok) valid.push(check.values);
      else errors.push({ index, error: describeProblems(check.problems) });
    });
    if (!valid.length) return { inserted: 0, failed: errors.length, errors, ids: [] };
    const rows = this.rows(caller, table);
    const first = await rows.reserveIds(valid.length);
    const stored = valid.map((d, i): StoredRow => ({ _id: first + i, d }));
    await rows.insertMany(stored);
    return { inserted: stored.length, failed: errors.length, errors, ids: stored.map((r) => r._id) };
  }

  async updateRow(caller: TableCaller, tableName: string, id: number, data: unknown) {
    const table = await this.load(caller, tableName);
    const checker = new RowChecker(table.fields);
    const check = checker.update(data);
    if (!check.ok) throw badRequest(describeProblems(check.problems), check.problems);
    const row = await this.rows(caller, table).update(id, check.values);
    if (!row) throw notFound('row');
    return checker.view(row);
  }

  async deleteRow(caller: TableCaller, tableName: string, id: number) {
    const table = await this.load(caller, tableName);
    if (!(await this.rows(caller, table).remove(id))) throw notFound('row');
    return { organizationId: caller.organizationId, tableName: table.name, id };
  }

  /** Renames a column: filters, sorts and rows use the new name right away. Rows store values under the
   * field's fixed storage key, so no data moves and concurrent writes cannot land under the old name. */
  async renameColumn(caller: TableCaller, tableName: string, columnName: string, newName: string) {
    const table = await this.load(caller, tableName);
    const field = table.fields.find((f) => f.name === columnName);
    if (!field) throw notFound('column');
    checkFieldName(newName, 'newName');
    if (newName === columnName) return toTableView(table);
    if (table.fields.some((f) => f.name === newName))
      throw conflict(`the table already has a column '${newName}'`);
    if (field.ddFieldName) {
      throw conflict(
        `column '${columnName}' is linked to Data Dictionary field '${field.ddFieldName}'; unlink it first`,
      );
    }
    const fields = table.fields.map((f) => (f.name === columnName ? { ...f, name: newName } : f));
    return toTableView(await this.replaceFields(caller, table, fields));
  }

  /** Links a column to the Data Dictionary field of the same name (rename the column first if needed). */
  async linkColumn(caller: TableCaller, tableName: string, columnName: string, ddFieldName: string) {
    const table = await this.load(caller, tableName);
    const field = table.fields.find((f) => f.name === columnName);
    if (!field) throw notFound('column');
    if (!DD_FIELD_NAME_PATTERN.test(ddFieldName)) {
      throw badRequest('ddFieldName must consist of lowercase letters, digits and underscores only');
    }
    if (ddFieldName !== field.name) {
      throw badRequest(
        `ddFieldName '${ddFieldName}' must equal the column's current name '${field.name}'; rename the column first`,
      );
    }
    if (field.ddFieldName === ddFieldName) return toTableView(table);
    const fields = table.fields.map((f) => (f.name === columnName ? { ...f, ddFieldName } : f));
    return toTableView(await this.replaceFields(caller, table, fields));
  }

  /** Removes a column's link; column and data stay. Unlinking an unlinked column changes nothing. */
  async unlinkColumn(caller: TableCaller, tableName: string, columnName: string) {
    const table = await this.load(caller, tableName);
    const field = table.fields.find((f) => f.name === columnName);
    if (!field) throw notFound('column');
    if (!field.ddFieldName) return toTableView(table);
    const fields = table.fields.map((f) => (f.name === columnName ? { ...f, ddFieldName: null } : f));
    return toTableView(await this.replaceFields(caller, table, fields));
  }

  private async replaceFields(caller: TableCaller, table: CustomTableDoc, fields: CustomTableDoc['fields']) {
    const updated = await this.defs(caller).replaceFields(table, fields);
    if (!updated) throw conflict('the table definition changed while this request ran; retry');
    return updated;
  }

  /** Whether the organization has the table, with no access check: an app manifest declares the tables it uses. */
  async exists(organizationId: string, tableName: string): Promise<boolean> {
    return Boolean(await this.repos.tenant(organizationId).tables.getByName(tableName));
  }
}
