import { Router } from 'express';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import { GroupsService, type GroupBody } from '@lib/services/groups.service';
import { body, ctxOf, param } from '@api/context';

export function groupsRouter(deps: Deps): Router {
  const service = new GroupsService(deps.models);
  const router = Router();
  const base = '/orgs/:organizationId/groups';
  router.get(base, async (req, res) => {
    const { q } = req.query as { q?: string };
    res.json(await service.list(ctxOf(req), { q, ...pageRequest(req.query) }));
  });
  router.post(base, async (req, res) => {
    const input = { isDefault: false, fullAccess: false, ...body<Partial<GroupBody>>(req) } as GroupBody;
    res.status(201).json(await service.create(ctxOf(req), input));
  });
  router.get(`${base}/:userGroupId`, async (req, res) => {
    res.json(await service.get(ctxOf(req), param(req, 'userGroupId')));
  });
  router.put(`${base}/:userGroupId`, async (req, res) => {
    res.json(await service.update(ctxOf(req), param(req, 'userGroupId'), body<GroupBody>(req)));
  });
  router.delete(`${base}/:userGroupId`, async (req, res) => {
    res.json(await service.remove(ctxOf(req), param(req, 'userGroupId')));
  });
  router.post(`${base}/:userGroupId/users`, async (req, res) => {
    res.json(
      await service.assignUser(ctxOf(req), param(req, 'userGroupId'), body<{ userId: string }>(req).userId),
    );
  });
  return router;
}
