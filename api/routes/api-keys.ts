import type { ApiKeyBody } from '@lib/api-keys/api-keys.service';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function apiKeysHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.apiKeys;
  return {
    async listApiKeys(req, res) {
      res.json(await service.list(ctxOf(req), pageRequest(req.query)));
    },
    async createApiKey(req, res) {
      res.status(201).json(await service.create(ctxOf(req), body<ApiKeyBody>(req)));
    },
    async getApiKey(req, res) {
      res.json(await service.get(ctxOf(req), param(req, 'apiKeyId')));
    },
    async updateApiKey(req, res) {
      res.json(await service.update(ctxOf(req), param(req, 'apiKeyId'), body<ApiKeyBody>(req)));
    },
    async deleteApiKey(req, res) {
      res.json(await service.remove(ctxOf(req), param(req, 'apiKeyId')));
    },
  };
}
