/** One ingestion run of one generation of a file. Id: workflowIds.ingestFile. */
export interface IngestFileInput {
  organizationId: string;
  knowledgeBaseId: string;
  fileId: string;
  generation: number;
  /** ISO time after which a file whose bytes never arrived ends in ERROR */
  uploadDeadline: string;
  /** A copy: chunks (and vectors, when the models match) come from this file instead of parsing an upload. */
  copyOf?: { organizationId: string; fileId: string };
}

export interface IngestFileResult {
  status: 'READY' | 'ERROR' | 'superseded';
  statusMessage?: string;
}

/** What the upload wait sees in the object store. */
export type UploadState = { state: 'absent' } | { state: 'present'; sizeBytes: number };

/** Removes a deleted file, or a deleted knowledge base with all its files. */
export interface PurgeKnowledgeInput {
  organizationId: string;
  knowledgeBaseId: string;
  fileId?: string;
}

export interface CopyKnowledgeBaseInput {
  organizationId: string;
  knowledgeBaseId: string;
  toOrganizationId: string;
  messageId: string;
  userId: string;
}

/** One slice of a file's chunks to embed. */
export interface EmbedBatchInput {
  organizationId: string;
  knowledgeBaseId: string;
  fileId: string;
  generation: number;
  from: number;
  to: number;
}

export type IngestFileWorkflow = (input: IngestFileInput) => Promise<IngestFileResult>;
export type PurgeKnowledgeWorkflow = (input: PurgeKnowledgeInput) => Promise<void>;
export type CopyKnowledgeBaseWorkflow = (
  input: CopyKnowledgeBaseInput,
) => Promise<{ knowledgeBaseId: string; files: number }>;
