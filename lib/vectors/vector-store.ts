/**
 * Where chunk embeddings live. One interface, two adapters: the embedded store on local disk (LanceDB) and
 * Pinecone. Chunk text and file metadata stay in MongoDB; a vector carries only what search filters on.
 *
 * Vectors of different embedding models never mix: every call names the `model` (its id and dimension), and an
 * adapter keeps one table / index per model. Within a model, the organization is the namespace.
 */
export interface EmbeddingModelRef {
  /** the embedding model's id, e.g. `local:all-MiniLM-L6-v2` or `openai:text-embedding-3-small` */
  id: string;
  dimensions: number;
}

export interface VectorMetadata {
  knowledgeBaseId: string;
  fileId: string;
  /** the chunk's id in MongoDB (its text, pages and file name are read from there) */
  chunkId: string;
}

export interface VectorRecord {
  /** unique within (model, namespace); ingestion derives it from fileId and chunk index, so a retried upsert
   * overwrites instead of duplicating */
  id: string;
  values: number[];
  metadata: VectorMetadata;
}

export interface VectorQuery {
  vector: number[];
  topK: number;
  /** only vectors of these knowledge bases (at least one) */
  knowledgeBaseIds: string[];
  /** only vectors of these files, when given */
  fileIds?: string[];
}

export interface VectorMatch {
  id: string;
  /** cosine similarity, higher is closer */
  score: number;
  metadata: VectorMetadata;
}

export interface VectorStore {
  /** Insert or replace by id. */
  upsert(model: EmbeddingModelRef, namespace: string, records: VectorRecord[]): Promise<void>;
  /** The topK closest vectors under the filter, closest first. */
  query(model: EmbeddingModelRef, namespace: string, query: VectorQuery): Promise<VectorMatch[]>;
  /** Remove every vector of a file. Idempotent. */
  deleteFile(
    model: EmbeddingModelRef,
    namespace: string,
    knowledgeBaseId: string,
    fileId: string,
  ): Promise<void>;
  /** Remove every vector of a knowledge base. Idempotent. */
  deleteKnowledgeBase(model: EmbeddingModelRef, namespace: string, knowledgeBaseId: string): Promise<void>;
  /** How many vectors a file has (tests and the exactly-once check of ingestion). */
  countFile(
    model: EmbeddingModelRef,
    namespace: string,
    knowledgeBaseId: string,
    fileId: string,
  ): Promise<number>;
  close(): Promise<void>;
}
