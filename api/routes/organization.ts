import { Router } from 'express';
import type { Deps } from '@lib/deps';
import { OrganizationService, type OrganizationPatch } from '@lib/services/organization.service';
import { body, ctxOf } from '@api/context';

export function organizationRouter(deps: Deps): Router {
  const service = new OrganizationService(deps.models);
  const router = Router();
  router.get('/orgs/:organizationId', async (req, res) => {
    res.json(await service.get(ctxOf(req)));
  });
  router.put('/orgs/:organizationId', async (req, res) => {
    res.json(await service.update(ctxOf(req), body<OrganizationPatch>(req)));
  });
  return router;
}
