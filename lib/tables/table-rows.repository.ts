import { mongo } from 'mongoose';
import type { Database } from '@lib/db/connection';
import { isDuplicateKey } from '@lib/db/duplicate-key';
import { AppError } from '@lib/errors';
import type { CustomTableDoc, TableFieldDoc } from './custom-table.schema';
import type { SortSpec } from './order-by';
import { fieldIndexName, fieldPath, rowsCollectionName, storageKey, type StoredRow } from './storage';
import { tableRowCounterModel, type TableRowCounterDoc } from './table-row-counter.schema';
const NAMESPACE_NOT_FOUND = 26;
const NAMESPACE_EXISTS = 48;
const MAX_TIME_MS_EXPIRED = 50;

/**
 * A page's rows, read one driver batch at a time, refused (400 page_too_large) once they hold more than
 * `maxBytes` of stored data: 1000 rows of a megabyte each would otherwise be read and answered whole.
 */
async function readWithin(cursor: mongo.FindCursor<StoredRow>, maxBytes: number): Promise<StoredRow[]> {
  const rows: StoredRow[] = [];
  let bytes = 0;
  try {
    for await (const row of cursor.batchSize(100)) {
      bytes += mongo.BSON.calculateObjectSize(row);
      if (bytes > maxBytes)
        throw new AppError(
          400,
          'page_too_large',
          `the page's rows hold more than ${maxBytes} bytes (TABLE_PAGE_MAX_BYTES); ask for fewer rows (limit)`,
        );
      rows.push(row);
    }
  } finally {
    await cursor.close();
  }
  return rows;
}

/** Only scalar fields are indexed: jsonb is stored as (possibly long) JSON text nobody ranges over. */
const isIndexed = (field: TableFieldDoc) => field.type !== 'jsonb';

/**
 * Rows of one table (the table was loaded scoped to its organization, so its rows collection is too).
 * Uses the driver directly: rows have a per-table shape that a mongoose schema could not describe.
 */
export class TableRowsRepository {
  private readonly rows: mongo.Collection<StoredRow>;
  /** `{ _id: tableId, last }`: the last row id handed out. Kept off the table definition, so inserting rows
   * never writes the definition that column changes update. */
  private readonly counters: mongo.Collection<TableRowCounterDoc>;

  constructor(
    db: Database,
    private readonly table: Pick<CustomTableDoc, '_id'>,
  ) {
    this.rows = db.collection<StoredRow>(rowsCollectionName(table._id));
    this.counters = db.collection<TableRowCounterDoc>(tableRowCounterModel.collection);
  }

  /** Creates the rows collection with one `{ d.<field>: 1, _id: 1 }` index per scalar field. */
  async createStorage(fields: TableFieldDoc[]) {
    try {
      await this.rows.db.createCollection(this.rows.collectionName);
    } catch (err) {
      if ((err as { code?: number }).code !== NAMESPACE_EXISTS) throw err;
    }
    const indexes = fields
      .filter(isIndexed)
      .map((f) => ({ key: { [fieldPath(storageKey(f))]: 1, _id: 1 }, name: fieldIndexName(storageKey(f)) }));
    // Serves: filtering and ordering rows by that field, with id as the tie-break of stable paging.
    if (indexes.length) await this.rows.createIndexes(indexes);
    await this.startCounter();
  }

  async dropStorage() {
    try {
      await this.rows.drop();
    } catch (err) {
      if ((err as { code?: number }).code !== NAMESPACE_NOT_FOUND) throw err;
    }
    await this.counters.deleteOne({ _id: this.table._id });
  }

  /**
   * Reserves `count` consecutive row ids and returns the first: one atomic `$inc` of the table's counter
   * (atomic on MongoDB and on the embedded database, which applies writes one at a time). Ids are never handed
   * out twice, not even those of deleted rows.
   */
  async reserveIds(count: number): Promise<number> {
    const bumped = await this.counters.findOneAndUpdate(
      { _id: this.table._id },
      { $inc: { last: count } },
      { returnDocument: 'after' },
    );
    if (bumped) return bumped.last - count + 1;
    await this.startCounter();
    return this.reserveIds(count);
  }

  /** Creates the table's counter after the newest stored row (tables created before counters existed). */
  private async startCounter() {
    const newest = await this.rows.find({}, { projection: { _id: 1 }, sort: { _id: -1 }, limit: 1 }).next();
    try {
      await this.counters.insertOne({ _id: this.table._id, last: newest?._id ?? 0 });
    } catch (err) {
      // Another writer started it first.
      if (!isDuplicateKey(err)) throw err;
    }
  }

  async insertMany(rows: StoredRow[]) {
    if (rows.length === 1) await this.rows.insertOne(rows[0] as StoredRow);
    else if (rows.length > 1) await this.rows.insertMany(rows, { ordered: true });
  }

  /** One page and the count. Both stop after `maxTimeMS` (a substring filter scans): then a 400. */
  async list(
    filter: mongo.Filter<StoredRow>,
    sort: SortSpec,
    opts: { offset: number; limit: number; maxTimeMS: number; maxBytes: number },
  ) {
    try {
      const { maxTimeMS } = opts;
      const cursor = this.rows.find(filter, { sort, skip: opts.offset, limit: opts.limit, maxTimeMS });
      const [items, total] = await Promise.all([
        readWithin(cursor, opts.maxBytes),
        this.rows.countDocuments(filter, { maxTimeMS }),
      ]);
      return { items, total };
    } catch (err) {
      if ((err as { code?: number }).code === MAX_TIME_MS_EXPIRED) {
        throw new AppError(
          400,
          'query_timeout',
          `the query ran longer than ${opts.maxTimeMS} ms; narrow the filters (eq on an indexed field is fastest)`,
        );
      }
      throw err;
    }
  }

  /** Sets the given fields (keyed by storage key, values in storage form); null when the row does not exist. */
  update(id: number, values: Record<string, unknown>) {
    const set = Object.fromEntries(Object.entries(values).map(([k, v]) => [fieldPath(k), v]));
    return this.rows.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: 'after' });
  }

  async remove(id: number): Promise<boolean> {
    const res = await this.rows.deleteOne({ _id: id });
    return res.deletedCount === 1;
  }
}
