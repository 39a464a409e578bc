import type { Request } from 'express';
import type { Deps } from '@lib/deps';
import type { FileStatus } from '@lib/knowledge-bases/kb-file.schema';
import type { KnowledgeBaseBody } from '@lib/knowledge-bases/knowledge-bases.service';
import type { UploadUrlBody } from '@lib/knowledge-bases/kb-files.service';
import { pageRequest } from '@lib/paging';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

const kbId = (req: Request) => param(req, 'knowledgeBaseId');
const fileId = (req: Request) => param(req, 'fileId');

/** q, limit (default 5), cursor and filePattern of both searches. */
function searchQuery(req: Request) {
  const q = req.query as Record<string, string | number | undefined>;
  return {
    q: String(q.q),
    limit: q.limit === undefined ? 5 : Number(q.limit),
    offset: q.cursor === undefined ? 0 : Number(q.cursor),
    filePattern: q.filePattern === undefined ? undefined : String(q.filePattern),
  };
}

export function knowledgeBasesHandlers(deps: Deps): OperationHandlers {
  const { knowledgeBases, kbFiles, kbSearch } = deps.services;
  return {
    async listKnowledgeBases(req, res) {
      const q = req.query as Record<string, string | boolean | undefined>;
      res.json(
        await knowledgeBases.list(ctxOf(req), {
          q: q.q as string | undefined,
          folder: q.folder as string | undefined,
          orderBy: q.orderBy as string | undefined,
          forAgentId: q.forAgentId as string | undefined,
          includePersonalKBs: q.includePersonalKBs === true || q.includePersonalKBs === 'true',
          ...pageRequest(req.query),
        }),
      );
    },
    async createKnowledgeBase(req, res) {
      res.status(201).json(await knowledgeBases.create(ctxOf(req), body<KnowledgeBaseBody>(req)));
    },
    async searchAllKnowledgeBases(req, res) {
      const { kbIds, kbOrgs } = req.query as { kbIds?: string; kbOrgs?: string };
      res.json(await kbSearch.searchAll(ctxOf(req), { ...searchQuery(req), kbIds, kbOrgs }));
    },
    async getKnowledgeBase(req, res) {
      res.json(await knowledgeBases.get(ctxOf(req), kbId(req)));
    },
    async updateKnowledgeBase(req, res) {
      res.json(await knowledgeBases.update(ctxOf(req), kbId(req), body<KnowledgeBaseBody>(req)));
    },
    async deleteKnowledgeBase(req, res) {
      res.json(await knowledgeBases.remove(ctxOf(req), kbId(req)));
    },
    async copyKnowledgeBaseToOrganization(req, res) {
      const { toOrganizationId } = body<{ toOrganizationId: string }>(req);
      res.json(await knowledgeBases.copyToOrganization(ctxOf(req), kbId(req), toOrganizationId));
    },
    async listKnowledgeBaseFiles(req, res) {
      const { query, status } = req.query as { query?: string; status?: FileStatus };
      res.json(await kbFiles.list(ctxOf(req), kbId(req), { query, status, ...pageRequest(req.query) }));
    },
    async createKnowledgeBaseFileUploadUrl(req, res) {
      res.status(201).json(await kbFiles.createUploadUrl(ctxOf(req), kbId(req), body<UploadUrlBody>(req)));
    },
    async getKnowledgeBaseFile(req, res) {
      res.json(await kbFiles.get(ctxOf(req), kbId(req), fileId(req)));
    },
    async deleteKnowledgeBaseFile(req, res) {
      res.json(await kbFiles.remove(ctxOf(req), kbId(req), fileId(req)));
    },
    async reindexKnowledgeBaseFile(req, res) {
      res.json(await kbFiles.reindex(ctxOf(req), kbId(req), fileId(req)));
    },
    async createKnowledgeBaseFileDownloadLink(req, res) {
      res.json(await kbFiles.downloadLink(ctxOf(req), kbId(req), fileId(req)));
    },
    async copyKnowledgeBaseFile(req, res) {
      const { destinationKnowledgeBaseId } = body<{ destinationKnowledgeBaseId: string }>(req);
      res
        .status(201)
        .json(await kbFiles.copy(ctxOf(req), kbId(req), fileId(req), destinationKnowledgeBaseId));
    },
    async searchKnowledgeBase(req, res) {
      res.json(await kbSearch.searchOne(ctxOf(req), kbId(req), searchQuery(req)));
    },
  };
}
