import { Router } from 'express';
import type { Deps } from '@lib/deps';
import { AssumeRoleService, type AssumeRoleBody } from '@lib/services/assume-role.service';
import { body, ctxOf, param } from '@api/context';

export function assumeRoleRouter(deps: Deps): Router {
  const service = new AssumeRoleService(deps.models, deps.tokens);
  const router = Router();
  router.post('/orgs/:organizationId/assume-role', async (req, res) => {
    res.json(await service.mint(ctxOf(req), body<AssumeRoleBody>(req)));
  });
  // Public: the token in the body is checked by its signature.
  router.post('/orgs/:organizationId/assume-role/verify', async (req, res) => {
    res.json(await service.verify(param(req, 'organizationId'), body<{ token: string }>(req).token));
  });
  return router;
}
