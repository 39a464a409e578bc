import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const kbChunkSchema = new Schema(
  {
    /** chunkDocId(fileId, generation, index): deterministic, so a retried parse rewrites the same chunks. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    knowledgeBaseId: { type: String, required: true },
    fileId: { type: String, required: true },
    generation: { type: Number, required: true },
    index: { type: Number, required: true },
    text: { type: String, required: true },
    /** `5` or `5-7` in paged files, else null. */
    pages: { type: String, default: null },
    /** The chunk's embedding (float32, little-endian) once embedded: copies reuse it instead of re-embedding. */
    embedding: { type: Buffer, default: null },
  },
  { versionKey: false },
);
// Serves: the chunks of one file generation, in order (embedding batches, copies, clean-up).
kbChunkSchema.index({ fileId: 1, generation: 1, index: 1 });

export type KbChunkDoc = DocOf<typeof kbChunkSchema>;
export const kbChunkModel = defineModel('KnowledgeBaseChunk', 'knowledge_base_chunks', kbChunkSchema);

export const chunkDocId = (fileId: string, generation: number, index: number) =>
  `${fileId}:${generation}:${String(index).padStart(7, '0')}`;
