import type { Deps } from '@lib/deps';
import { checkHealth } from '@lib/health';
import type { OrganizationPatch } from '@lib/organization/organization.service';
import { body, ctxOf } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function organizationHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.organization;
  return {
    async getHealth(_req, res) {
      const health = await checkHealth(deps);
      res.status(health.status === 'ok' ? 200 : 503).json({
        status: health.status,
        checks: health.checks,
        ...(health.failing.length ? { failing: health.failing } : {}),
      });
    },
    async getOrganization(req, res) {
      res.json(await service.get(ctxOf(req)));
    },
    async updateOrganization(req, res) {
      res.json(await service.update(ctxOf(req), body<OrganizationPatch>(req)));
    },
  };
}
