import type { Chunk } from './parsing/types';
import { TenantRepository } from '@lib/db/tenant-repository';
import { chunkDocId, kbChunkModel, type KbChunkDoc } from './kb-chunk.schema';

export interface ChunkOwner {
  knowledgeBaseId: string;
  fileId: string;
  generation: number;
}

/** Chunks of one organization's files: their text, pages and (once embedded) their vectors. */
export class KbChunksRepository extends TenantRepository {
  private readonly model = this.db.model(kbChunkModel);

  /** Writes a generation's chunks by deterministic id: a retried parse rewrites the same documents. */
  async put(owner: ChunkOwner, chunks: Array<Chunk & { embedding?: KbChunkDoc['embedding'] }>) {
    for (let i = 0; i < chunks.length; i += 500) {
      await this.model.bulkWrite(
        chunks.slice(i, i + 500).map((c) => {
          const _id = chunkDocId(owner.fileId, owner.generation, c.index);
          const doc = { embedding: null, ...c, ...owner, _id, organizationId: this.organizationId };
          return { replaceOne: { filter: { _id }, replacement: doc, upsert: true } };
        }),
        { ordered: false },
      );
    }
  }

  /** Chunks `from` ≤ index < `to` of a generation, in order (by primary key). */
  async range(owner: Omit<ChunkOwner, 'knowledgeBaseId'>, from: number, to: number) {
    const ids = Array.from({ length: to - from }, (_, i) =>
      chunkDocId(owner.fileId, owner.generation, from + i),
    );
    const docs = await this.model.find({ _id: { $in: ids } }).lean<KbChunkDoc[]>();
    return docs.filter((d) => d.organizationId === this.organizationId).sort((a, b) => a.index - b.index);
  }

  getMany(ids: string[]) {
    return this.model.find({ _id: { $in: ids }, organizationId: this.organizationId }).lean<KbChunkDoc[]>();
  }

  async setEmbeddings(items: Array<{ id: string; embedding: Buffer }>) {
    if (!items.length) return;
    await this.model.bulkWrite(
      items.map(({ id, embedding }) => ({
        updateOne: {
          filter: { _id: id, organizationId: this.organizationId },
          update: { $set: { embedding } },
        },
      })),
      { ordered: false },
    );
  }

  /** Removes a file's chunks, except those of `keepGeneration` when given. */
  async removeFile(fileId: string, keepGeneration?: number) {
    const filter: Record<string, unknown> = { fileId, organizationId: this.organizationId };
    if (keepGeneration !== undefined) filter.generation = { $ne: keepGeneration };
    await this.model.deleteMany(filter);
  }
}
