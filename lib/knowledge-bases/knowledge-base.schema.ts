import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const KB_TYPES = ['ORGANIZATION', 'PERSONAL'] as const;
export type KnowledgeBaseType = (typeof KB_TYPES)[number];
export const PARSE_STRATEGIES = ['auto', 'llm-vision', 'text', 'raw'] as const;

const nullableString = { type: String, default: null };

export const knowledgeBaseSchema = new Schema(
  {
    /** `<organizationId>:<knowledgeBaseId>` (kbDocId): an agent's personal knowledge base has a deterministic
     * id, so concurrent first requests create one. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    knowledgeBaseId: { type: String, required: true },
    type: { type: String, enum: KB_TYPES, required: true },
    title: { type: String, required: true },
    /** Lower-cased title: the sort key of `orderBy=title` (the embedded database has no collation). */
    titleSort: { type: String, required: true },
    llmDescription: { type: String, default: '' },
    creatorUserId: nullableString,
    isPublic: { type: Boolean, default: false },
    parseStrategy: { type: String, enum: PARSE_STRATEGIES, default: 'auto' },
    folder: nullableString,
    /** The agent whose personal knowledge base this is (forAgentId), else null. */
    agentId: nullableString,
    /** The embedding model every file of this knowledge base is embedded with (`<provider>:<model>`). */
    embeddingModel: { type: String, required: true },
    embeddingDimensions: { type: Number, required: true },
    /** Set when deletion was accepted: the knowledge base is gone for every reader while a workflow removes
     * its files. */
    deletedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the list ordered by title (the default), by created_at and by updated_at.
knowledgeBaseSchema.index({ organizationId: 1, titleSort: 1, knowledgeBaseId: 1 });
knowledgeBaseSchema.index({ organizationId: 1, createdAt: 1 });
knowledgeBaseSchema.index({ organizationId: 1, updatedAt: 1 });
// Serves: global search over the public knowledge bases of every organization.
knowledgeBaseSchema.index({ isPublic: 1 });

export type KnowledgeBaseDoc = DocOf<typeof knowledgeBaseSchema>;
export const knowledgeBaseModel = defineModel('KnowledgeBase', 'knowledge_bases', knowledgeBaseSchema);

export const kbDocId = (organizationId: string, knowledgeBaseId: string) =>
  `${organizationId}:${knowledgeBaseId}`;
