import { WORKFLOWS, workflowIds, type IngestFileWorkflow, type PurgeKnowledgeWorkflow } from '@contracts';
import { undoOnFailure, type Admission, type Slot } from '@lib/admission/admission';
import type { RequestContext } from '@lib/auth/context';
import { AppError, badRequest, conflict, notFound, referenced } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, type PageRequest } from '@lib/paging';
import { findOrCreate } from '@lib/db/duplicate-key';
import type { Tenants } from '@lib/db/tenants';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import type { KbAccess } from './kb-access';
import type { FileStatus, KbFileDoc } from './kb-file.schema';
import {
  DOWNLOAD_LINK_SECONDS,
  objectKey,
  UPLOAD_URL_SECONDS,
  UPLOAD_WAIT_MS,
  uploadKeyOf,
  type ObjectStore,
} from './object-store';
import { lookup } from 'mime-types';
import {
  fileExtension,
  isPlausibleContentType,
  isSupportedFile,
  SUPPORTED_EXTENSIONS,
} from './parsing/extensions';
import type { ParseStrategy } from './parsing/types';
import type { KnowledgeBasesStore } from './store';
import { toFileView } from './views';

export interface UploadUrlBody {
  fileName: string;
  contentType: string;
  createDownloadLink?: boolean;
  parseStrategyOverride?: ParseStrategy;
  customInstructions?: string;
  externalFileUrl?: string;
  /** The upload's exact length, when the client knows it: the URL is then signed for that length only. */
  sizeBytes?: number;
}

/** Why a file of this name and type cannot be uploaded, or null. */
function uploadTypeProblem(fileName: string, contentType: string): string | null {
  if (!isSupportedFile(fileName)) {
    const ext = fileExtension(fileName) || 'no extension';
    return `unsupported file type (${ext}); supported: ${SUPPORTED_EXTENSIONS.join(' ')}`;
  }
  if (!isPlausibleContentType(fileName, contentType))
    return `contentType ${contentType} does not fit a ${fileExtension(fileName)} file`;
  return null;
}

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

export class KbFilesService {
  constructor(
    private readonly repos: Tenants<KnowledgeBasesStore>,
    private readonly access: KbAccess,
    private readonly temporal: TemporalDeps,
    private readonly objects: ObjectStore,
    private readonly admission: Pick<Admission, 'admit' | 'startCounted'>,
    private readonly maxFileBytes: number,
  ) {}

  private files(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).kbFiles;
  }

  private async file(ctx: RequestContext, knowledgeBaseId: string, fileId: string) {
    const file = await this.files(ctx).get(knowledgeBaseId, fileId);
    if (!file) throw notFound('file');
    return file;
  }

  /** Room for the ingestion of a file's generation, taken before the request writes anything (429 beyond the
   * organization's bound). */
  private admit(organizationId: string, fileId: string, generation = 1) {
    return this.admission.admit(
      organizationId,
      'ingestions',
      workflowIds.ingestFile(organizationId, fileId, generation),
    );
  }

  /** Starts the ingestion run of a file's current generation (idempotent per generation), counted as one of the
   * organization's unfinished ingestions (`admitted`: see Admission.startCounted). */
  private async ingest(
    file: KbFileDoc,
    opts: { copyOf?: { organizationId: string; fileId: string }; admitted?: Slot } = {},
  ) {
    const workflowId = workflowIds.ingestFile(file.organizationId, file._id, file.generation);
    await this.admission.startCounted(
      file.organizationId,
      'ingestions',
      workflowId,
      () =>
        startIdempotent<IngestFileWorkflow>(this.temporal, WORKFLOWS.ingestFile, {
          workflowId,
          attributes: { organizationId: file.organizationId, knowledgeBaseId: file.knowledgeBaseId },
          args: [
            {
              organizationId: file.organizationId,
              knowledgeBaseId: file.knowledgeBaseId,
              fileId: file._id,
              generation: file.generation,
              uploadDeadline: new Date(Date.now() + UPLOAD_WAIT_MS).toISOString(),
              copyOf: opts.copyOf,
            },
          ],
        }),
      opts.admitted,
    );
  }

  async createUploadUrl(ctx: RequestContext, knowledgeBaseId: string, body: UploadUrlBody) {
    await this.access.writable(ctx, knowledgeBaseId);
    const fileName = body.fileName.trim();
    const problem = uploadTypeProblem(fileName, body.contentType);
    if (problem) throw badRequest(problem);
    if (body.sizeBytes !== undefined && body.sizeBytes > this.maxFileBytes)
      throw new AppError(
        400,
        'file_too_large',
        `sizeBytes ${body.sizeBytes} is over the ${this.maxFileBytes} bytes a file may have (KB_MAX_FILE_BYTES)`,
      );
    const fileId = newId('kbf');
    const admitted = await this.admit(ctx.organizationId, fileId);
    return undoOnFailure(admitted, () =>
      this.openUpload(ctx, knowledgeBaseId, fileId, fileName, body, admitted),
    );
  }

  private async openUpload(
    ctx: RequestContext,
    knowledgeBaseId: string,
    fileId: string,
    fileName: string,
    body: UploadUrlBody,
    admitted: Slot,
  ) {
    const key = objectKey(ctx.organizationId, knowledgeBaseId, fileId, fileName);
    // The upload has its own key: the ingestion moves the bytes to `key` (see takeUpload).
    const uploadKey = uploadKeyOf(key);
    // The URL first: a record whose URL could not be made would wait for bytes that cannot come.
    const uploadUrl = await this.objects.uploadUrl(uploadKey, body.contentType, body.sizeBytes);
    const downloadLink = body.createDownloadLink ? await this.objects.downloadUrl(key, fileName) : undefined;
    const file = await this.files(ctx).create(fileId, {
      knowledgeBaseId,
      fileName,
      key,
      uploadKey,
      contentType: body.contentType,
      status: 'WAITING-UPLOAD',
      creatorUserId: ctx.userId,
      parseStrategyOverride: body.parseStrategyOverride ?? null,
      customInstructions: body.customInstructions ?? null,
      externalFileUrl: body.externalFileUrl ?? null,
    });
    try {
      await this.ingest(file, { admitted });
    } catch (err) {
      // Never a file waiting for a run that does not exist: it says what happened and how to go on.
      await this.files(ctx).setForGeneration(fileId, file.generation, {
        status: 'ERROR',
        statusMessage: 'processing could not be started; reindex the file once the service is healthy',
      });
      throw err;
    }
    return {
      ...toFileView(file),
      uploadUrl,
      uploadUrlExpiresAt: inSeconds(UPLOAD_URL_SECONDS),
      ...(downloadLink ? { downloadLink } : {}),
    };
  }

  /**
   * A file whose bytes the service holds (a mail attachment), through the same path as an upload: the record
   * (WAITING-UPLOAD), the bytes in the object store, the ingestion run. The agent's configuration authorises it,
   * not a member's rights. `fileId` is the caller's deterministic id, so a retry adds nothing twice. Null when the
   * knowledge base is gone or the file type is not one knowledge bases read.
   */
  async addFromBytes(
    organizationId: string,
    knowledgeBaseId: string,
    input: {
      fileId: string;
      fileName: string;
      contentType: string;
      bytes: Uint8Array;
      creatorUserId: string;
    },
  ): Promise<KbFileDoc | null> {
    const tenant = this.repos.tenant(organizationId);
    const fileName = input.fileName.trim();
    if (!isSupportedFile(fileName) || !(await tenant.knowledgeBases.get(knowledgeBaseId))) return null;
    // Mail clients often label attachments application/octet-stream or wrongly: the extension decides then.
    const contentType = isPlausibleContentType(fileName, input.contentType)
      ? input.contentType
      : lookup(fileName) || 'application/octet-stream';
    const key = objectKey(organizationId, knowledgeBaseId, input.fileId, fileName);
    const { doc: file } = await findOrCreate(
      () => tenant.kbFiles.getIncludingDeleted(input.fileId),
      () =>
        tenant.kbFiles.create(input.fileId, {
          knowledgeBaseId,
          fileName,
          key,
          contentType,
          status: 'WAITING-UPLOAD',
          creatorUserId: input.creatorUserId,
        }),
    );
    if (file.deletedAt) return null;
    if (!file.uploadedAt) await this.objects.put(file.key, input.bytes, file.contentType);
    await this.ingest(file);
    return file;
  }

  /**
   * A new file of the knowledge base from bytes already in the object store (an artifact version): the bytes
   * are copied to the file's own key, then the file goes through the normal ingestion like an upload that has
   * arrived (ENQUEUED, then PROCESSING, READY or ERROR).
   */
  async createFromObject(
    ctx: RequestContext,
    knowledgeBaseId: string,
    source: { fileName: string; contentType: string; key: string; sizeBytes: number },
  ) {
    // The knowledge base is named in the request body (an artifact sent to it).
    await referenced('knowledgeBaseId', knowledgeBaseId, this.access.writable(ctx, knowledgeBaseId));
    const problem = uploadTypeProblem(source.fileName, source.contentType);
    if (problem) throw badRequest(problem);
    const fileId = newId('kbf');
    const admitted = await this.admit(ctx.organizationId, fileId);
    return undoOnFailure(admitted, () => this.fileFromObject(ctx, knowledgeBaseId, fileId, source, admitted));
  }

  private async fileFromObject(
    ctx: RequestContext,
    knowledgeBaseId: string,
    fileId: string,
    source: { fileName: string; contentType: string; key: string; sizeBytes: number },
    admitted: Slot,
  ) {
    const key = objectKey(ctx.organizationId, knowledgeBaseId, fileId, source.fileName);
    await this.objects.copy(source.key, key);
    const file = await this.files(ctx).create(fileId, {
      knowledgeBaseId,
      fileName: source.fileName,
      key,
      contentType: source.contentType,
      status: 'ENQUEUED',
      creatorUserId: ctx.userId,
      sizeBytes: source.sizeBytes,
    });
    try {
      await this.ingest(file, { admitted });
    } catch (err) {
      await this.files(ctx).setForGeneration(fileId, file.generation, {
        status: 'ERROR',
        statusMessage: 'processing could not be started; reindex the file once the service is healthy',
      });
      throw err;
    }
    return toFileView(file);
  }

  async list(
    ctx: RequestContext,
    knowledgeBaseId: string,
    opts: { query?: string; status?: FileStatus } & PageRequest,
  ) {
    await this.access.readable(ctx, knowledgeBaseId);
    const { items, total } = await this.files(ctx).list(knowledgeBaseId, opts);
    return page(items.map(toFileView), total, opts.offset);
  }

  async get(ctx: RequestContext, knowledgeBaseId: string, fileId: string) {
    await this.access.readable(ctx, knowledgeBaseId);
    return toFileView(await this.file(ctx, knowledgeBaseId, fileId));
  }

  /** Hides the file at once; a durable workflow removes its object, chunks and vectors. */
  async remove(ctx: RequestContext, knowledgeBaseId: string, fileId: string) {
    await this.access.writable(ctx, knowledgeBaseId);
    await this.file(ctx, knowledgeBaseId, fileId);
    if (!(await this.files(ctx).markDeleted(fileId))) throw notFound('file');
    await startIdempotent<PurgeKnowledgeWorkflow>(this.temporal, WORKFLOWS.purgeKnowledge, {
      workflowId: workflowIds.purgeFile(ctx.organizationId, fileId),
      args: [{ organizationId: ctx.organizationId, knowledgeBaseId, fileId }],
      attributes: { organizationId: ctx.organizationId, knowledgeBaseId },
    });
    return { message: 'the file and its embeddings are being deleted', fileId };
  }

  /** A new generation: WAITING-UPLOAD again when the bytes never came, else ENQUEUED. */
  async reindex(ctx: RequestContext, knowledgeBaseId: string, fileId: string) {
    await this.access.writable(ctx, knowledgeBaseId);
    const current = await this.file(ctx, knowledgeBaseId, fileId);
    const admitted = await this.admit(ctx.organizationId, fileId, current.generation + 1);
    return undoOnFailure(admitted, async () => {
      const next = await this.files(ctx).nextGeneration(
        fileId,
        current.uploadedAt ? 'ENQUEUED' : 'WAITING-UPLOAD',
      );
      if (!next) throw notFound('file');
      await this.ingest(next, { admitted });
      return toFileView(next);
    });
  }

  async downloadLink(ctx: RequestContext, knowledgeBaseId: string, fileId: string) {
    await this.access.readable(ctx, knowledgeBaseId);
    const file = await this.file(ctx, knowledgeBaseId, fileId);
    if (!file.uploadedAt) throw conflict('the file has no bytes yet: upload them to its uploadUrl first');
    return {
      fileId,
      downloadLink: await this.objects.downloadUrl(file.key, file.fileName),
      expiresAt: inSeconds(DOWNLOAD_LINK_SECONDS),
    };
  }

  /** Copies a READY file into another knowledge base of the organization; the copy becomes READY by itself. */
  async copy(
    ctx: RequestContext,
    knowledgeBaseId: string,
    fileId: string,
    destinationKnowledgeBaseId: string,
  ) {
    await this.access.readable(ctx, knowledgeBaseId);
    await referenced(
      'destinationKnowledgeBaseId',
      destinationKnowledgeBaseId,
      this.access.writable(ctx, destinationKnowledgeBaseId),
    );
    const source = await this.file(ctx, knowledgeBaseId, fileId);
    if (source.status !== 'READY')
      throw conflict(`only READY files can be copied; this one is ${source.status}`);
    const copyId = newId('kbf');
    const admitted = await this.admit(ctx.organizationId, copyId);
    return undoOnFailure(admitted, () =>
      this.copyAs(ctx, source, copyId, destinationKnowledgeBaseId, admitted),
    );
  }

  private async copyAs(
    ctx: RequestContext,
    source: KbFileDoc,
    copyId: string,
    destinationKnowledgeBaseId: string,
    admitted: Slot,
  ) {
    const copy = await this.files(ctx).create(copyId, {
      knowledgeBaseId: destinationKnowledgeBaseId,
      fileName: source.fileName,
      key: objectKey(ctx.organizationId, destinationKnowledgeBaseId, copyId, source.fileName),
      contentType: source.contentType,
      status: 'ENQUEUED',
      creatorUserId: ctx.userId,
      parseStrategyOverride: source.parseStrategyOverride,
      customInstructions: source.customInstructions,
      externalFileUrl: source.externalFileUrl,
      sizeBytes: source.sizeBytes,
    });
    await this.ingest(copy, { copyOf: { organizationId: ctx.organizationId, fileId: source._id }, admitted });
    return toFileView(copy);
  }
}
