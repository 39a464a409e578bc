import { Pinecone, type Index, type RecordMetadata } from '@pinecone-database/pinecone';
import { vectorIdPrefix } from '@lib/vectors/ids';
import type {
  EmbeddingModelRef,
  VectorMatch,
  VectorMetadata,
  VectorQuery,
  VectorRecord,
  VectorStore,
} from '@lib/vectors/vector-store';

export interface PineconeSettings {
  apiKey: string;
  /** embedding model id → its index; without `host` the SDK looks the host up once (a control-plane call) */
  indexes: Record<string, { name: string; host?: string }>;
}

type Metadata = VectorMetadata & RecordMetadata;

// The data plane's limits: 1000 vectors and 2 MB per upsert, 1000 ids per delete, 100 ids per list page,
// topK up to 1000 when metadata is returned.
const MAX_UPSERT_VECTORS = 1000;
const MAX_UPSERT_BYTES = 2 * 1024 * 1024 - 64 * 1024;
const MAX_DELETE_IDS = 1000;
const LIST_PAGE = 100;
const MAX_TOP_K = 1000;

/**
 * Chunk vectors in Pinecone: one index per embedding model, one namespace per organization. Ids follow
 * `vectorId()` (lib/vectors/ids.ts) — upsert refuses others — because serverless indexes delete only by id:
 * deletes and counts list ids by prefix.
 */
export class PineconeVectorStore implements VectorStore {
  private readonly client: Pinecone;
  private readonly indexes = new Map<string, Index<Metadata>>();

  constructor(private readonly settings: PineconeSettings) {
    this.client = new Pinecone({ apiKey: settings.apiKey });
  }

  async upsert(model: EmbeddingModelRef, namespace: string, records: VectorRecord[]): Promise<void> {
    const ns = this.namespace(model, namespace);
    for (const r of records) {
      const prefix = vectorIdPrefix(r.metadata.knowledgeBaseId, r.metadata.fileId);
      if (!r.id.startsWith(prefix)) {
        throw new Error(`vector id ${r.id} does not start with ${prefix}: make ids with vectorId()`);
      }
      if (r.values.length !== model.dimensions) {
        throw new Error(`vector ${r.id} has ${r.values.length} values; ${model.id} has ${model.dimensions}`);
      }
    }
    for (const batch of upsertBatches(records)) {
      await ns.upsert({
        records: batch.map((r) => ({ id: r.id, values: r.values, metadata: { ...r.metadata } })),
      });
    }
  }

  async query(model: EmbeddingModelRef, namespace: string, q: VectorQuery): Promise<VectorMatch[]> {
    if (q.knowledgeBaseIds.length === 0 || q.fileIds?.length === 0 || q.topK <= 0) return [];
    const filter: Record<string, unknown> = { knowledgeBaseId: { $in: q.knowledgeBaseIds } };
    if (q.fileIds) filter.fileId = { $in: q.fileIds };
    const reply = await this.namespace(model, namespace).query({
      vector: q.vector,
      topK: Math.min(q.topK, MAX_TOP_K),
      filter,
      includeMetadata: true,
      includeValues: false,
    });
    return reply.matches.map((m) => ({
      id: m.id,
      // the index's metric is cosine: the score is the similarity
      score: m.score ?? 0,
      metadata: {
        knowledgeBaseId: String(m.metadata?.knowledgeBaseId),
        fileId: String(m.metadata?.fileId),
        chunkId: String(m.metadata?.chunkId),
      },
    }));
  }

  deleteFile(model: EmbeddingModelRef, namespace: string, knowledgeBaseId: string, fileId: string) {
    return this.deletePrefix(model, namespace, vectorIdPrefix(knowledgeBaseId, fileId));
  }

  deleteKnowledgeBase(model: EmbeddingModelRef, namespace: string, knowledgeBaseId: string) {
    return this.deletePrefix(model, namespace, vectorIdPrefix(knowledgeBaseId));
  }

  async countFile(
    model: EmbeddingModelRef,
    namespace: string,
    knowledgeBaseId: string,
    fileId: string,
  ): Promise<number> {
    const ids = await this.listIds(model, namespace, vectorIdPrefix(knowledgeBaseId, fileId));
    return ids.length;
  }

  async close(): Promise<void> {
    // The SDK holds no connections of its own beyond fetch's pool.
  }

  private async deletePrefix(model: EmbeddingModelRef, namespace: string, prefix: string): Promise<void> {
    // Listing first and deleting after: deleting while paging would move the pages under the cursor.
    const ids = await this.listIds(model, namespace, prefix);
    const ns = this.namespace(model, namespace);
    for (let i = 0; i < ids.length; i += MAX_DELETE_IDS) {
      await ns.deleteMany({ ids: ids.slice(i, i + MAX_DELETE_IDS) });
    }
  }

  private async listIds(model: EmbeddingModelRef, namespace: string, prefix: string): Promise<string[]> {
    const ns = this.namespace(model, namespace);
    const ids: string[] = [];
    let paginationToken: string | undefined;
    do {
      const page = await ns.listPaginated({ prefix, limit: LIST_PAGE, paginationToken });
      for (const v of page.vectors ?? []) if (v.id) ids.push(v.id);
      paginationToken = page.pagination?.next;
    } while (paginationToken);
    return ids;
  }

  private namespace(model: EmbeddingModelRef, namespace: string): Index<Metadata> {
    let index = this.indexes.get(model.id);
    if (!index) {
      const target = this.settings.indexes[model.id];
      if (!target) throw new Error(`no Pinecone index is configured for embedding model ${model.id}`);
      index = this.client.index<Metadata>({ name: target.name, host: target.host });
      this.indexes.set(model.id, index);
    }
    return index.namespace(namespace);
  }
}

/** Batches under both upsert limits; a vector's JSON size is measured, not guessed from its dimension. */
function* upsertBatches(records: VectorRecord[]): Generator<VectorRecord[]> {
  let batch: VectorRecord[] = [];
  let bytes = 0;
  for (const r of records) {
    const size = Buffer.byteLength(JSON.stringify(r)) + 1;
    if (batch.length > 0 && (batch.length >= MAX_UPSERT_VECTORS || bytes + size > MAX_UPSERT_BYTES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(r);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}
