import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import type { Role } from '@lib/users/member.schema';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function usersHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.users;
  return {
    async listUsers(req, res) {
      const { q, role } = req.query as { q?: string; role?: Role };
      res.json(await service.list(ctxOf(req), { q, role, ...pageRequest(req.query, 100) }));
    },
    async createUser(req, res) {
      const input = body<{ email: string; name: string; role: Role }>(req);
      res.status(201).json(await service.create(ctxOf(req), input));
    },
    async getUser(req, res) {
      res.json(await service.get(ctxOf(req), param(req, 'userId')));
    },
    async updateUser(req, res) {
      res.json(await service.updateRole(ctxOf(req), param(req, 'userId'), body<{ role: Role }>(req).role));
    },
    async deleteUser(req, res) {
      const { reassignWorkflowsTo } = req.query as { reassignWorkflowsTo?: string };
      res.json(await service.remove(ctxOf(req), param(req, 'userId'), reassignWorkflowsTo));
    },
  };
}
