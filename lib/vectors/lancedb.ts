import { connect, makeArrowTable, Session, type Connection, type Table } from '@lancedb/lancedb';
import { DEFAULT_CACHE_SETTINGS, type LanceCacheSettings } from '@lib/vectors/lancedb-caches';
import {
  DEFAULT_INDEX_SETTINGS,
  maintainIndex,
  tuneSearch,
  VECTOR_INDEX,
  type LanceIndexSettings,
} from '@lib/vectors/lancedb-index';
import {
  rowKey,
  tableName,
  toMetadata,
  vectorSchema,
  whereClause,
  type VectorRow,
} from '@lib/vectors/lancedb-schema';
import type {
  EmbeddingModelRef,
  VectorMatch,
  VectorQuery,
  VectorRecord,
  VectorStore,
} from '@lib/vectors/vector-store';

export { DEFAULT_INDEX_SETTINGS, type LanceIndexSettings };

/**
 * Writes to a table without a vector index after which it is compacted (LanceDB's advice: after about 20 data
 * changes). Each upsert or delete adds a fragment or a deletion file, and every read and write goes over all of
 * them: over 600 five-row writes without compaction, a write and a search went from 0.2 s to over a second.
 */
export const COMPACT_AFTER_WRITES = 20;

/** What a query reads back: the ids and the distance, never the vector. */
const MATCH_COLUMNS = ['id', 'knowledge_base_id', 'file_id', 'chunk_id', '_distance'];

/**
 * Chunk vectors in LanceDB tables on local disk (the embedded default): one table per embedding model, the
 * organization in a `namespace` column that every statement filters on.
 *
 * LanceDB commits optimistically: two writes to one table from this process could conflict, so writes to a
 * table (upserts, deletes, index builds) take turns through a queue per table. One process writes (the
 * worker); others may read.
 */
export class LanceVectorStore implements VectorStore {
  private readonly tables = new Map<string, Promise<Table | undefined>>();
  private readonly writeQueues = new Map<string, Promise<unknown>>();
  private readonly settings: LanceIndexSettings;
  /** Rows and writes since the table's index state was last looked at, per table. */
  private readonly sinceCheck = new Map<string, { rows: number; writes: number }>();

  private db: Promise<Connection> | undefined;
  private session: Session | undefined;

  /** Connects on first use (the folder is created then). */
  constructor(
    private readonly dir: string,
    settings: Partial<LanceIndexSettings> = {},
    private readonly caches: LanceCacheSettings = DEFAULT_CACHE_SETTINGS,
  ) {
    this.settings = { ...DEFAULT_INDEX_SETTINGS, ...settings };
    // indexStats() would otherwise log a deprecation warning on every call and return the centroids we never read.
    process.env.LANCE_INCLUDE_VECTOR_CENTROIDS ??= 'false';
  }

  private connection(): Promise<Connection> {
    if (!this.db) {
      // The API process searches while the worker process writes: every read looks for newer versions
      // (a check of the table's manifest on local disk) instead of answering from the version it opened.
      const MB = 2 ** 20;
      this.session ??= new Session(
        BigInt(this.caches.indexCacheMb * MB),
        BigInt(this.caches.metadataCacheMb * MB),
      );
      this.db = connect(this.dir, { readConsistencyInterval: 0, session: this.session });
      this.db.catch(() => (this.db = undefined));
    }
    return this.db;
  }

  async upsert(model: EmbeddingModelRef, namespace: string, records: VectorRecord[]): Promise<void> {
    if (records.length === 0) return;
    for (const r of records) {
      if (r.values.length !== model.dimensions) {
        throw new Error(`vector ${r.id} has ${r.values.length} values; ${model.id} has ${model.dimensions}`);
      }
    }
    // Last write wins within one call too: mergeInsert refuses a source with one key twice.
    const byKey = new Map<string, VectorRow>();
    for (const r of records) {
      byKey.set(rowKey(namespace, r.id), {
        key: rowKey(namespace, r.id),
        namespace,
        id: r.id,
        knowledge_base_id: r.metadata.knowledgeBaseId,
        file_id: r.metadata.fileId,
        chunk_id: r.metadata.chunkId,
        vector: r.values,
      });
    }
    const data = makeArrowTable([...byKey.values()], { schema: vectorSchema(model.dimensions) });
    await this.write(model, async (table) => {
      await table.mergeInsert('key').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(data);
    });
    this.written(model, byKey.size);
  }

  /**
   * Counts a write to the model's table; after enough rows or writes, looks at the table's index (and, below the
   * index threshold, compacts it). Not awaited: the caller's write is done; the table catches up in its queue.
   */
  private written(model: EmbeddingModelRef, rows: number) {
    const name = tableName(model);
    const since = this.sinceCheck.get(name) ?? { rows: 0, writes: 0 };
    since.rows += rows;
    since.writes += 1;
    this.sinceCheck.set(name, since);
    const rowsDue = since.rows >= Math.min(this.settings.threshold, this.settings.reindexAfter) / 4;
    if (!rowsDue && since.writes < COMPACT_AFTER_WRITES) return;
    this.sinceCheck.delete(name);
    this.write(model, (table) => maintainIndex(table, this.settings, model.dimensions)).catch(
      () => undefined,
    );
  }

  async query(model: EmbeddingModelRef, namespace: string, q: VectorQuery): Promise<VectorMatch[]> {
    if (q.knowledgeBaseIds.length === 0 || q.fileIds?.length === 0 || q.topK <= 0) return [];
    const table = await this.table(model, false);
    if (!table) return [];
    const where = whereClause(namespace, q);
    const vector = Float32Array.from(q.vector);
    const search = () =>
      table
        .vectorSearch(vector)
        .column('vector')
        .distanceType('cosine')
        .where(where)
        .select(MATCH_COLUMNS)
        .limit(q.topK);
    type Row = Record<string, unknown> & { _distance: number };
    let rows = (await tuneSearch(search(), this.settings, q.topK).toArray()) as Row[];
    // A selective filter (one file, a small knowledge base) can leave the index's candidates short of topK
    // matches: then the filtered rows are few, and an exact scan of them (scalar indices find them) fills
    // topK. Without a vector index the first search was that scan already.
    if (rows.length < q.topK && (await table.indexStats(VECTOR_INDEX))) {
      rows = (await search().bypassVectorIndex().toArray()) as Row[];
    }
    return rows.map((row) => ({
      id: String(row.id),
      // cosine distance is 1 − cosine similarity
      score: 1 - row._distance,
      metadata: toMetadata(row),
    }));
  }

  deleteFile(model: EmbeddingModelRef, namespace: string, knowledgeBaseId: string, fileId: string) {
    return this.delete(
      model,
      whereClause(namespace, { knowledgeBaseIds: [knowledgeBaseId], fileIds: [fileId] }),
    );
  }

  deleteKnowledgeBase(model: EmbeddingModelRef, namespace: string, knowledgeBaseId: string) {
    return this.delete(model, whereClause(namespace, { knowledgeBaseIds: [knowledgeBaseId] }));
  }

  async countFile(
    model: EmbeddingModelRef,
    namespace: string,
    knowledgeBaseId: string,
    fileId: string,
  ): Promise<number> {
    const table = await this.table(model, false);
    if (!table) return 0;
    return table.countRows(
      whereClause(namespace, { knowledgeBaseIds: [knowledgeBaseId], fileIds: [fileId] }),
    );
  }

  /**
   * Builds the vector index now if the table has reached the threshold, or folds new rows into it; upserts
   * do this on their own in the background. Resolves when done (benchmarks, tests).
   */
  async maintain(model: EmbeddingModelRef): Promise<void> {
    await this.write(model, (table) => maintainIndex(table, this.settings, model.dimensions));
  }

  /** Bytes in LanceDB's caches of this store (0 before it connected): benches and tests. */
  cacheBytes(): number {
    return this.session ? Number(this.session.sizeBytes()) : 0;
  }

  /** Waits for queued writes and index work, then closes the connection. */
  async close(): Promise<void> {
    await Promise.all([...this.writeQueues.values()].map((q) => q.catch(() => undefined)));
    if (this.db) (await this.db).close();
  }

  private async delete(model: EmbeddingModelRef, where: string): Promise<void> {
    if (!(await this.table(model, false))) return;
    await this.write(model, async (table) => {
      await table.delete(where);
    });
    this.written(model, 0);
  }

  /** Opens (or, for a write, creates) the model's table; undefined when reading a table never written. */
  private table(model: EmbeddingModelRef, create: boolean): Promise<Table | undefined> {
    const name = tableName(model);
    const cached = this.tables.get(name);
    if (cached) return cached.then((t) => t ?? (create ? this.createTable(model) : undefined));
    const opened = this.connection().then(async (db) => {
      if ((await db.tableNames()).includes(name)) return db.openTable(name);
      return create ? this.createTable(model) : undefined;
    });
    this.tables.set(name, opened);
    // Neither a failure nor "no table yet" is remembered: another process may create the table any time.
    opened.then(
      (t) => t ?? this.tables.delete(name),
      () => this.tables.delete(name),
    );
    return opened;
  }

  private createTable(model: EmbeddingModelRef): Promise<Table> {
    const name = tableName(model);
    const created = this.connection().then((db) =>
      db.createEmptyTable(name, vectorSchema(model.dimensions), { existOk: true }),
    );
    this.tables.set(name, created);
    return created;
  }

  /** Runs fn on the model's table after every write queued before it. */
  private write<T>(model: EmbeddingModelRef, fn: (table: Table) => Promise<T>): Promise<T> {
    const name = tableName(model);
    const previous = this.writeQueues.get(name) ?? Promise.resolve();
    const next = previous.then(async () => fn((await this.table(model, true))!));
    this.writeQueues.set(
      name,
      next.catch(() => undefined),
    );
    return next;
  }
}
