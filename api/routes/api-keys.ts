import { Router } from 'express';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import { ApiKeysService, type ApiKeyBody } from '@lib/services/api-keys.service';
import { body, ctxOf, param } from '@api/context';

export function apiKeysRouter(deps: Deps): Router {
  const service = new ApiKeysService(deps.models);
  const router = Router();
  const base = '/orgs/:organizationId/api-keys';
  router.get(base, async (req, res) => {
    res.json(await service.list(ctxOf(req), pageRequest(req.query)));
  });
  router.post(base, async (req, res) => {
    res.status(201).json(await service.create(ctxOf(req), body<ApiKeyBody>(req)));
  });
  router.get(`${base}/:apiKeyId`, async (req, res) => {
    res.json(await service.get(ctxOf(req), param(req, 'apiKeyId')));
  });
  router.put(`${base}/:apiKeyId`, async (req, res) => {
    res.json(await service.update(ctxOf(req), param(req, 'apiKeyId'), body<ApiKeyBody>(req)));
  });
  router.delete(`${base}/:apiKeyId`, async (req, res) => {
    res.json(await service.remove(ctxOf(req), param(req, 'apiKeyId')));
  });
  return router;
}
