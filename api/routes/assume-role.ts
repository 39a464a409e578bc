import type { AssumeRoleBody } from '@lib/assume-role/assume-role.service';
import type { Deps } from '@lib/deps';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function assumeRoleHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.assumeRole;
  return {
    async assumeRole(req, res) {
      res.json(await service.mint(ctxOf(req), body<AssumeRoleBody>(req)));
    },
    // Public: the token in the body is checked by its signature.
    async verifyAssumeRole(req, res) {
      res.json(await service.verify(param(req, 'organizationId'), body<{ token: string }>(req).token));
    },
  };
}
