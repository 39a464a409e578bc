import type { CopyKnowledgeBaseInput, IngestFileInput, PurgeKnowledgeInput } from '@contracts';
import type { Embedders } from '@lib/embeddings/embedders';
import { objectKey, uploadKeyOf, type ObjectStore } from '@lib/knowledge-bases/object-store';
import type { KnowledgeBasesCrossOrg } from '@lib/knowledge-bases/public-knowledge-bases.repository';
import type { Tenants } from '@lib/db/tenants';
import type { KnowledgeBasesStore } from '@lib/knowledge-bases/store';
import type { VectorStore } from '@lib/vectors/vector-store';
import { derivedId } from '@lib/ids';

/** A deleted knowledge base leaves the chain steps that used it (the chains feature's attachments). */
export interface ChainStepTargets {
  removeTarget(organizationId: string, kind: 'knowledge-base', targetId: string): Promise<void>;
}

export interface MaintenanceDeps {
  repos: Tenants<KnowledgeBasesStore> & { publicKnowledgeBases: KnowledgeBasesCrossOrg };
  chainAttachments: ChainStepTargets;
  objects: ObjectStore;
  embedders: Embedders;
  vectors: VectorStore;
}

/** A deterministic id derived from the job and its source, so a retried step finds what it made before. */
const jobDerivedId = (prefix: string, ...parts: string[]) => derivedId(prefix, parts, 16);

export function createMaintenanceActivities(deps: MaintenanceDeps) {
  const modelOf = (kb: { embeddingModel: string; embeddingDimensions: number }) =>
    deps.embedders.get(kb.embeddingModel)?.model ?? {
      id: kb.embeddingModel,
      dimensions: kb.embeddingDimensions,
    };

  return {
    /** Removes one file's vectors, chunks, object and record. Idempotent. */
    async purgeFile(input: { organizationId: string; knowledgeBaseId: string; fileId: string }) {
      const tenant = deps.repos.tenant(input.organizationId);
      const [file, kb] = await Promise.all([
        tenant.kbFiles.getIncludingDeleted(input.fileId),
        tenant.knowledgeBases.getIncludingDeleted(input.knowledgeBaseId),
      ]);
      if (!file) return;
      if (kb)
        await deps.vectors.deleteFile(modelOf(kb), input.organizationId, input.knowledgeBaseId, input.fileId);
      await tenant.kbChunks.removeFile(input.fileId);
      await deps.objects.remove(file.key);
      await deps.objects.remove(uploadKeyOf(file.key));
      await tenant.kbFiles.remove(input.fileId);
    },

    /** The next file ids of a knowledge base (deleted ones included) after `afterId`. */
    nextFileIds(input: {
      organizationId: string;
      knowledgeBaseId: string;
      afterId: string | null;
      limit: number;
    }) {
      return deps.repos
        .tenant(input.organizationId)
        .kbFiles.idsAfter(input.knowledgeBaseId, input.afterId, input.limit);
    },

    /** After its files: the knowledge base's remaining vectors, rules, attachments everywhere, and record. */
    async finishKnowledgeBasePurge(input: PurgeKnowledgeInput) {
      const tenant = deps.repos.tenant(input.organizationId);
      const kb = await tenant.knowledgeBases.getIncludingDeleted(input.knowledgeBaseId);
      if (!kb) return;
      await deps.vectors.deleteKnowledgeBase(modelOf(kb), input.organizationId, input.knowledgeBaseId);
      await tenant.etlRules.removeForKnowledgeBase(input.knowledgeBaseId);
      await deps.chainAttachments.removeTarget(input.organizationId, 'knowledge-base', input.knowledgeBaseId);
      await deps.repos.publicKnowledgeBases.removeKnowledgeBaseAttachmentsCrossOrg(
        input.organizationId,
        input.knowledgeBaseId,
      );
      await tenant.knowledgeBases.remove(input.knowledgeBaseId);
    },

    /** The destination knowledge base of a copy to another organization (created once per copy). */
    async createKnowledgeBaseCopy(input: CopyKnowledgeBaseInput): Promise<string | null> {
      const source = await deps.repos.tenant(input.organizationId).knowledgeBases.get(input.knowledgeBaseId);
      if (!source) return null;
      const dest = deps.repos.tenant(input.toOrganizationId).knowledgeBases;
      const id = jobDerivedId('kb', input.messageId, input.knowledgeBaseId);
      await dest.findOrCreate(id, () =>
        dest.create(id, {
          type: 'ORGANIZATION',
          title: source.title,
          llmDescription: source.llmDescription,
          parseStrategy: source.parseStrategy,
          folder: source.folder,
          isPublic: false,
          creatorUserId: input.userId,
          agentId: null,
          embeddingModel: source.embeddingModel,
          embeddingDimensions: source.embeddingDimensions,
        }),
      );
      return id;
    },

    /** The destination file of one READY source file (created once per copy), as the input of its ingestion
     * run; null when the source file is not READY. */
    async createFileCopy(input: {
      source: { organizationId: string; fileId: string };
      organizationId: string;
      knowledgeBaseId: string;
      jobId: string;
      userId: string;
      uploadDeadline: string;
    }): Promise<IngestFileInput | null> {
      const src = await deps.repos
        .tenant(input.source.organizationId)
        .kbFiles.getIncludingDeleted(input.source.fileId);
      if (!src || src.deletedAt || src.status !== 'READY') return null;
      const files = deps.repos.tenant(input.organizationId).kbFiles;
      const fileId = jobDerivedId('kbf', input.jobId, input.source.fileId);
      if (!(await files.getIncludingDeleted(fileId))) {
        await files.create(fileId, {
          knowledgeBaseId: input.knowledgeBaseId,
          fileName: src.fileName,
          key: objectKey(input.organizationId, input.knowledgeBaseId, fileId, src.fileName),
          contentType: src.contentType,
          status: 'ENQUEUED',
          creatorUserId: input.userId,
          parseStrategyOverride: src.parseStrategyOverride,
          customInstructions: src.customInstructions,
          externalFileUrl: src.externalFileUrl,
          sizeBytes: src.sizeBytes,
        });
      }
      return {
        organizationId: input.organizationId,
        knowledgeBaseId: input.knowledgeBaseId,
        fileId,
        generation: 1,
        uploadDeadline: input.uploadDeadline,
        copyOf: input.source,
      };
    },
  };
}
