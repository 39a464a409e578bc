import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';
import { PARSE_STRATEGIES } from './knowledge-base.schema';

export const FILE_STATUSES = ['WAITING-UPLOAD', 'ENQUEUED', 'PROCESSING', 'READY', 'ERROR'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

const nullableString = { type: String, default: null };
const nullableNumber = { type: Number, default: null };

export const kbFileSchema = new Schema(
  {
    /** The fileId (globally unique; reads check the organization). */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    knowledgeBaseId: { type: String, required: true },
    fileName: { type: String, required: true },
    /** Lower-cased fileName: the case-insensitive `query` filter and `filePattern` glob. */
    fileNameKey: { type: String, required: true },
    key: { type: String, required: true },
    /**
     * Where the upload URL puts the bytes (`uploadKeyOf(key)`); the ingestion moves them to `key` when it takes
     * them. Null once the file is READY: from then on no upload replaces what was indexed. Null too for files
     * whose bytes the service wrote itself, and for files made before uploads had their own key (their URL
     * writes `key` itself, for at most an hour).
     */
    uploadKey: nullableString,
    contentType: { type: String, required: true },
    status: { type: String, enum: FILE_STATUSES, required: true },
    parseStrategyOverride: { type: String, enum: [...PARSE_STRATEGIES, null], default: null },
    customInstructions: nullableString,
    statusMessage: nullableString,
    externalFileUrl: nullableString,
    creatorUserId: nullableString,
    sizeBytes: nullableNumber,
    pageCount: nullableNumber,
    chunkCount: nullableNumber,
    /** Goes up with every reindex; an ingestion run of an older generation stops and writes nothing. */
    generation: { type: Number, default: 1 },
    /** When its bytes were first seen in the object store (reindex waits again only when they never came). */
    uploadedAt: { type: Date, default: null },
    /**
     * The parse attempt in progress (`<workflow>/<run>/<activity>#<attempt>`), cleared when it ends: left behind
     * only by a worker that died parsing, which the next attempt reads as a poison pill (lib/temporal/crash-marker.ts).
     */
    parseAttempt: nullableString,
    /** Set when deletion was accepted (the file is gone for readers while a workflow removes its data). */
    deletedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the file list of a knowledge base, newest first, and the walk over its files on delete and copy.
kbFileSchema.index({ organizationId: 1, knowledgeBaseId: 1, createdAt: -1 });

export type KbFileDoc = DocOf<typeof kbFileSchema>;
export const kbFileModel = defineModel('KnowledgeBaseFile', 'knowledge_base_files', kbFileSchema);
