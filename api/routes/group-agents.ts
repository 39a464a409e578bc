import { Router } from 'express';
import type { Deps } from '@lib/deps';
import { GroupAgentsService } from '@lib/services/group-agents.service';
import { body, ctxOf, param } from '@api/context';

export function groupAgentsRouter(deps: Deps): Router {
  const service = new GroupAgentsService(deps.models);
  const router = Router();
  const base = '/orgs/:organizationId/groups/:userGroupId/agents';
  router.get(base, async (req, res) => {
    res.json(await service.list(ctxOf(req), param(req, 'userGroupId')));
  });
  router.post(base, async (req, res) => {
    const { agentId } = body<{ agentId: string }>(req);
    const { mapping, created } = await service.add(ctxOf(req), param(req, 'userGroupId'), agentId);
    res.status(created ? 201 : 200).json(mapping);
  });
  router.delete(`${base}/:agentId`, async (req, res) => {
    res.json(await service.remove(ctxOf(req), param(req, 'userGroupId'), param(req, 'agentId')));
  });
  return router;
}
