import type { AnalysisCreateBody, AnalysisUpdateBody } from '@lib/analyses/analyses.service';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function analysesHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.analyses;
  const conversationId = (req: Parameters<typeof param>[0]) => param(req, 'conversationId');
  const analysisId = (req: Parameters<typeof param>[0]) => param(req, 'analysisId');
  return {
    async createAnalysis(req, res) {
      res
        .status(201)
        .json(await service.create(ctxOf(req), conversationId(req), body<AnalysisCreateBody>(req)));
    },
    async listAnalyses(req, res) {
      res.json(await service.list(ctxOf(req), conversationId(req), pageRequest(req.query)));
    },
    async getAnalysis(req, res) {
      res.json(await service.get(ctxOf(req), conversationId(req), analysisId(req)));
    },
    async updateAnalysis(req, res) {
      res.json(
        await service.update(ctxOf(req), conversationId(req), analysisId(req), body<AnalysisUpdateBody>(req)),
      );
    },
    async deleteAnalysis(req, res) {
      res.json(await service.remove(ctxOf(req), conversationId(req), analysisId(req)));
    },
  };
}
