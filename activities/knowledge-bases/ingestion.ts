import { ApplicationFailure, Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import { FAILURES, type EmbedBatchInput, type IngestFileInput, type UploadState } from '@contracts';
import type { Embedders } from '@lib/embeddings/embedders';
import { EmbeddingRejected } from '@lib/embeddings/embedder';
import { EmbeddingUnavailable } from '@lib/embeddings/openai';
import type { Tenants } from '@lib/db/tenants';
import type { KbFileDoc } from '@lib/knowledge-bases/kb-file.schema';
import { ObjectTooLarge, uploadKeyOf, type ObjectStore } from '@lib/knowledge-bases/object-store';
import type { KnowledgeBasesStore } from '@lib/knowledge-bases/store';
import { takeUpload } from '@lib/knowledge-bases/upload-take';
import {
  chunkSegments,
  createVisionReader,
  ParseError,
  ParseSandbox,
  type ParseLimits,
} from '@lib/knowledge-bases/parsing';
import type { Logger } from '@lib/logger';
import { CrashedBefore, withCrashMarker, type CrashMarkerStore } from '@lib/temporal/crash-marker';
import type { VectorStore } from '@lib/vectors/vector-store';
import { vectorId } from '@lib/vectors/ids';
import { embeddingFromBuffer, embeddingToBuffer } from './embedding-buffer';

/** How an embedder's failure reaches Temporal: a refusal is final, a rate limit that names its wait is retried
 * after it (not at the policy's backoff), anything else is retried by the policy. */
export function embeddingFailure(err: unknown): unknown {
  if (err instanceof EmbeddingRejected)
    return ApplicationFailure.nonRetryable(err.message, FAILURES.embeddingRejected);
  if (err instanceof EmbeddingUnavailable && err.retryAfterMs)
    return ApplicationFailure.create({ message: err.message, nextRetryDelay: err.retryAfterMs });
  return err;
}

export interface IngestionDeps {
  repos: Tenants<KnowledgeBasesStore>;
  objects: ObjectStore;
  embedders: Embedders;
  vectors: VectorStore;
  llm: OpenAI;
  logger: Logger;
  kb: { maxFileBytes: number; visionModel: string; parse: ParseLimits; parseConcurrency: number };
}

const superseded = () =>
  ApplicationFailure.nonRetryable('the file was deleted or reindexed meanwhile', FAILURES.fileSuperseded);
const unparseable = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.fileUnparseable);

/** Keeps a long activity's heartbeat going while it works (parsing a large file yields between pages). */
async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => Context.current().heartbeat(), 5_000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

export function createIngestionActivities(deps: IngestionDeps) {
  // One per process: KB_PARSE_CONCURRENCY parse processes at most, whatever the activity concurrency.
  const sandbox = new ParseSandbox(deps.kb.parse, deps.kb.parseConcurrency);

  /**
   * The file and its knowledge base while this run's generation is still wanted; else the run stops. A run never
   * finds its own generation in ERROR (that ends it): the API wrote it when this run's start was refused, and a
   * start a frozen Temporal server took after the call's deadline must not process a file its caller was told
   * is not being processed.
   */
  async function live(input: {
    organizationId: string;
    knowledgeBaseId: string;
    fileId: string;
    generation: number;
  }) {
    const tenant = deps.repos.tenant(input.organizationId);
    const [file, kb] = await Promise.all([
      tenant.kbFiles.getIncludingDeleted(input.fileId),
      tenant.knowledgeBases.get(input.knowledgeBaseId),
    ]);
    if (!file || file.deletedAt || file.generation !== input.generation || file.status === 'ERROR' || !kb)
      throw superseded();
    const embedder = deps.embedders.get(kb.embeddingModel);
    return { tenant, file, kb, embedder };
  }

  const tooLarge = (sizeBytes: number | null) =>
    unparseable(
      `the file${sizeBytes === null ? '' : ` (${sizeBytes} bytes)`} is larger than the ${deps.kb.maxFileBytes} bytes ` +
        `(${Math.round(deps.kb.maxFileBytes / 1024 / 1024)} MB) a file may have; split or compress it and upload it again`,
    );

  async function set(input: IngestFileInput | EmbedBatchInput, fields: Partial<KbFileDoc>) {
    const tenant = deps.repos.tenant(input.organizationId);
    if (!(await tenant.kbFiles.setForGeneration(input.fileId, input.generation, fields))) throw superseded();
  }

  /** The parse's crash marker on the file record; clearing it never fails the attempt (a superseded run has
   * nothing left to clear). */
  const parseMarker = (input: IngestFileInput, file: KbFileDoc): CrashMarkerStore => ({
    read: () => Promise.resolve(file.parseAttempt ?? null),
    write: async (marker) => {
      if (marker) await set(input, { parseAttempt: marker });
      else
        await deps.repos
          .tenant(input.organizationId)
          .kbFiles.setForGeneration(input.fileId, input.generation, { parseAttempt: null });
    },
  });

  return {
    /** Whether the bytes are in the object store yet; takes them from the upload URL's key when they are. */
    async checkUpload(input: IngestFileInput): Promise<UploadState> {
      const { file } = await live(input);
      const size = await takeUpload(deps.objects, file, deps.kb.maxFileBytes);
      return size === null ? { state: 'absent' } : { state: 'present', sizeBytes: size };
    },

    async markEnqueued(input: IngestFileInput, sizeBytes: number) {
      const { file } = await live(input);
      await set(input, { status: 'ENQUEUED', sizeBytes, uploadedAt: file.uploadedAt ?? new Date() });
    },

    /** Parses the file's bytes into chunks stored in MongoDB; returns how many. */
    async parseFile(input: IngestFileInput): Promise<{ chunkCount: number; pageCount: number | null }> {
      const { tenant, file, kb, embedder } = await live(input);
      if (!embedder)
        throw unparseable(`the embedding model ${kb.embeddingModel} is not configured on this service`);
      await set(input, { status: 'PROCESSING', statusMessage: null });
      if ((file.sizeBytes ?? 0) > deps.kb.maxFileBytes) throw tooLarge(file.sizeBytes!);
      return withHeartbeat(async () => {
        let bytes: Uint8Array;
        try {
          bytes = await deps.objects.read(file.key, deps.kb.maxFileBytes);
        } catch (err) {
          if (err instanceof ObjectTooLarge) throw tooLarge(null);
          throw err;
        }
        try {
          const { parsed, chunks } = await withCrashMarker(parseMarker(input, file), async (strict) => {
            const doc = await sandbox.parse(
              {
                fileName: file.fileName,
                bytes,
                strategy: file.parseStrategyOverride ?? kb.parseStrategy,
                customInstructions: file.customInstructions,
                vision: createVisionReader(deps.llm, deps.kb.visionModel),
              },
              Context.current().cancellationSignal,
              strict,
            );
            return { parsed: doc, chunks: chunkSegments(doc.segments) };
          });
          if (!chunks.length) throw new ParseError('no text was found in the file');
          await tenant.kbChunks.put(input, chunks);
          // Vectors of an earlier generation go now: from here on the file is searchable only when READY.
          await deps.vectors.deleteFile(
            embedder.model,
            input.organizationId,
            input.knowledgeBaseId,
            input.fileId,
          );
          return { chunkCount: chunks.length, pageCount: parsed.pageCount ?? null };
        } catch (err) {
          if (err instanceof CrashedBefore) {
            deps.logger.warn(
              { organizationId: input.organizationId, fileId: input.fileId, attempt: err.attempt },
              'a parse crashed its worker twice; the file ends in ERROR instead of being parsed again',
            );
            throw unparseable(
              `parsing this file crashed the worker that parsed it (${err.message}); it is not parsed again ` +
                'automatically, so that it cannot take down another: check the file, then reindex it to try once more',
            );
          }
          if (err instanceof ParseError) throw unparseable(err.message);
          throw err;
        }
      });
    },

    /** A copy's bytes and chunks come from its source file; embeddings too when both use the same model. */
    async copyFromSource(input: IngestFileInput): Promise<{ chunkCount: number; pageCount: number | null }> {
      const { tenant, file, kb } = await live(input);
      const from = input.copyOf!;
      const source = deps.repos.tenant(from.organizationId);
      const src = await source.kbFiles.getIncludingDeleted(from.fileId);
      if (!src || src.deletedAt || src.status !== 'READY' || !src.chunkCount)
        throw unparseable('the file this is a copy of was deleted or changed before it could be copied');
      const srcKb = await source.knowledgeBases.get(src.knowledgeBaseId);
      const sameModel = srcKb?.embeddingModel === kb.embeddingModel;
      await set(input, {
        status: 'PROCESSING',
        statusMessage: null,
        uploadedAt: file.uploadedAt ?? new Date(),
      });
      await deps.objects.copy(src.key, file.key);
      for (let start = 0; start < src.chunkCount; start += 500) {
        const chunks = await source.kbChunks.range(
          { fileId: src._id, generation: src.generation },
          start,
          Math.min(src.chunkCount, start + 500),
        );
        await tenant.kbChunks.put(
          input,
          chunks.map((c) => ({
            index: c.index,
            text: c.text,
            pages: c.pages ?? null,
            embedding: sameModel ? c.embedding : null,
          })),
        );
      }
      return { chunkCount: src.chunkCount, pageCount: src.pageCount ?? null };
    },

    /** Embeds chunks [from, to) and upserts their vectors under deterministic ids (a retry overwrites). */
    async embedChunks(input: EmbedBatchInput): Promise<void> {
      const { tenant, embedder } = await live(input);
      if (!embedder) throw unparseable('the embedding model of this knowledge base is not configured');
      const chunks = await tenant.kbChunks.range(input, input.from, input.to);
      const missing = chunks.filter((c) => !c.embedding);
      let fresh: number[][] = [];
      try {
        fresh = missing.length ? await withHeartbeat(() => embedder.embed(missing.map((c) => c.text))) : [];
      } catch (err) {
        throw embeddingFailure(err);
      }
      const freshById = new Map(missing.map((c, i) => [c._id, fresh[i]!]));
      await tenant.kbChunks.setEmbeddings(
        missing.map((c) => ({ id: c._id, embedding: embeddingToBuffer(freshById.get(c._id)!) })),
      );
      // The embedded store's writes wait behind its index builds (up to minutes on a large table): beat meanwhile.
      await withHeartbeat(() =>
        deps.vectors.upsert(
          embedder.model,
          input.organizationId,
          chunks.map((c) => ({
            id: vectorId(input.knowledgeBaseId, input.fileId, c.index),
            values: freshById.get(c._id) ?? embeddingFromBuffer(c.embedding!),
            metadata: { knowledgeBaseId: input.knowledgeBaseId, fileId: input.fileId, chunkId: c._id },
          })),
        ),
      );
      // A delete that ran while this batch was being embedded removed the vectors before they were written:
      // remove them again rather than leave them behind.
      try {
        await live(input);
      } catch (err) {
        await deps.vectors.deleteFile(
          embedder.model,
          input.organizationId,
          input.knowledgeBaseId,
          input.fileId,
        );
        throw err;
      }
    },

    async markReady(input: IngestFileInput, counts: { chunkCount: number; pageCount: number | null }) {
      // READY pins the bytes that were indexed: the upload URL's key is no longer taken (see takeUpload).
      const { file } = await live(input);
      await set(input, { status: 'READY', statusMessage: null, ...counts, uploadKey: null });
      await deps.objects.remove(uploadKeyOf(file.key));
      await deps.repos.tenant(input.organizationId).kbChunks.removeFile(input.fileId, input.generation);
    },

    /** Ends the run in ERROR with a message a person can act on (nothing to do when the run was superseded). */
    async markError(input: IngestFileInput, statusMessage: string) {
      const tenant = deps.repos.tenant(input.organizationId);
      await tenant.kbFiles.setForGeneration(input.fileId, input.generation, {
        status: 'ERROR',
        statusMessage,
      });
    },
  };
}
