import { Router } from 'express';
import type { Role } from '@lib/db/member.schema';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import { UsersService } from '@lib/services/users.service';
import { body, ctxOf, param } from '@api/context';

export function usersRouter(deps: Deps): Router {
  const service = new UsersService(deps.models, deps.temporal);
  const router = Router();
  const base = '/orgs/:organizationId/users';
  router.get(base, async (req, res) => {
    const { q, role } = req.query as { q?: string; role?: Role };
    res.json(await service.list(ctxOf(req), { q, role, ...pageRequest(req.query, 100) }));
  });
  router.post(base, async (req, res) => {
    res
      .status(201)
      .json(await service.create(ctxOf(req), body<{ email: string; name: string; role: Role }>(req)));
  });
  router.get(`${base}/:userId`, async (req, res) => {
    res.json(await service.get(ctxOf(req), param(req, 'userId')));
  });
  router.put(`${base}/:userId`, async (req, res) => {
    res.json(await service.updateRole(ctxOf(req), param(req, 'userId'), body<{ role: Role }>(req).role));
  });
  router.delete(`${base}/:userId`, async (req, res) => {
    const { reassignWorkflowsTo } = req.query as { reassignWorkflowsTo?: string };
    res.json(await service.remove(ctxOf(req), param(req, 'userId'), reassignWorkflowsTo));
  });
  return router;
}
