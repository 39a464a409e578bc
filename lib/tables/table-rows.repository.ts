import type { mongo } from 'mongoose';
import type { Database } from '@lib/db/connection';
import { isDuplicateKey } from '@lib/db/duplicate-key';
import { AppError } from '@lib/errors';
import type { CustomTableDoc, TableFieldDoc } from './custom-table.schema';
import type { SortSpec } from './order-by';
import { fieldIndexName, fieldPath, rowsCollectionName, storageKey, type StoredRow } from './storage';
import { rowIdBlockId, tableRowIdBlockModel, type TableRowIdBlockDoc } from './table-row-id-block.schema';
const NAMESPACE_NOT_FOUND = 26;
const NAMESPACE_EXISTS = 48;
const MAX_TIME_MS_EXPIRED = 50;
/** Each failed attempt means another writer got a block first; far more than any real contention. */
const MAX_RESERVE_ATTEMPTS = 10_000;

/** Only scalar fields are indexed: jsonb is stored as (possibly long) JSON text nobody ranges over. */
const isIndexed = (field: TableFieldDoc) => field.type !== 'jsonb';

/**
 * Rows of one table (the table was loaded scoped to its organization, so its rows collection is too).
 * Uses the driver directly: rows have a per-table shape that a mongoose schema could not describe.
 */
export class TableRowsRepository {
  private readonly rows: mongo.Collection<StoredRow>;
  private readonly blocks: mongo.Collection<TableRowIdBlockDoc>;
  /** `{ _id: tableId, next }`: where the next reservation should try first. Kept off the table definition so
   * row inserts never write the definition (FerretDB v1 updates rewrite the whole document, so concurrent
   * updates of one document can undo each other, e.g. a column rename). */
  private readonly hints: mongo.Collection<{ _id: string; next: number }>;

  constructor(
    db: Database,
    private readonly table: Pick<CustomTableDoc, '_id'>,
  ) {
    this.rows = db.collection<StoredRow>(rowsCollectionName(table._id));
    this.blocks = db.collection<TableRowIdBlockDoc>(tableRowIdBlockModel.collection);
    this.hints = db.collection<{ _id: string; next: number }>('table_row_id_hints');
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
  }

  async dropStorage() {
    try {
      await this.rows.drop();
    } catch (err) {
      if ((err as { code?: number }).code !== NAMESPACE_NOT_FOUND) throw err;
    }
    await this.blocks.deleteMany({ tableId: this.table._id });
    await this.hints.deleteOne({ _id: this.table._id });
  }

  /**
   * Reserves `count` consecutive row ids and returns the first. The insert of the block starting at the
   * next free id is the atomic step (see table-row-id-block.schema.ts); on a collision the colliding
   * block tells where to try next. Callers then raise the hint with advanceIdHint (in parallel with
   * their row insert) so the next reservation usually succeeds at its first try.
   */
  async reserveIds(count: number): Promise<number> {
    const hint = await this.hints.findOne({ _id: this.table._id });
    let start = Math.max(1, hint?.next ?? 1);
    for (let attempt = 0; attempt < MAX_RESERVE_ATTEMPTS; attempt++) {
      const _id = rowIdBlockId(this.table._id, start);
      try {
        await this.blocks.insertOne({
          _id,
          tableId: this.table._id,
          start,
          end: start + count - 1,
          createdAt: new Date(),
        });
        return start;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const taken = await this.blocks.findOne({ _id });
      if (!taken) throw new Error(`row id block ${_id} collided but cannot be read`);
      start = taken.end + 1;
    }
    throw new Error(`could not reserve row ids for table ${this.table._id}`);
  }

  /** Raises the table's next-id hint to `next` (never lowers it). */
  async advanceIdHint(next: number) {
    const raise = () => this.hints.updateOne({ _id: this.table._id }, { $max: { next } }, { upsert: true });
    try {
      await raise();
    } catch (err) {
      // Concurrent first writers both upsert the hint; the loser's insert collides, and the hint now exists.
      if (!isDuplicateKey(err)) throw err;
      await raise();
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
    opts: { offset: number; limit: number; maxTimeMS: number },
  ) {
    try {
      const { maxTimeMS } = opts;
      const [items, total] = await Promise.all([
        this.rows.find(filter, { sort, skip: opts.offset, limit: opts.limit, maxTimeMS }).toArray(),
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
