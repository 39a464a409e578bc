import type { Deps } from '@lib/deps';
import { ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function browserSessionsHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.browserSessions;
  return {
    async createBrowserSession(req, res) {
      res.status(201).json(await service.create(ctxOf(req), param(req, 'conversationId')));
    },
    async listBrowserSessions(req, res) {
      res.json(await service.list(ctxOf(req), param(req, 'conversationId')));
    },
    async stopBrowserSession(req, res) {
      res.json(await service.stop(ctxOf(req), param(req, 'conversationId'), param(req, 'sessionId')));
    },
    async listChainRunBrowserSessions(req, res) {
      res.json(await service.listForRun(ctxOf(req), param(req, 'actionChainId'), param(req, 'runId')));
    },
  };
}
