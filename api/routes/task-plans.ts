import type { Deps } from '@lib/deps';
import { ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function taskPlansHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.taskPlans;
  return {
    async listTaskPlans(req, res) {
      res.json(await service.listActive(ctxOf(req), param(req, 'conversationId')));
    },
    async getTaskPlan(req, res) {
      res.json(await service.get(ctxOf(req), param(req, 'conversationId'), param(req, 'planId')));
    },
    async cancelTaskPlan(req, res) {
      res.json(await service.cancel(ctxOf(req), param(req, 'conversationId'), param(req, 'planId')));
    },
  };
}
