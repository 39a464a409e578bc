import type { Deps } from '@lib/deps';
import type { GroupBody } from '@lib/groups/groups.service';
import { pageRequest } from '@lib/paging';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function groupsHandlers(deps: Deps): OperationHandlers {
  const { groups, groupAgents } = deps.services;
  const groupId = (req: Parameters<typeof param>[0]) => param(req, 'userGroupId');
  return {
    async listGroups(req, res) {
      const { q } = req.query as { q?: string };
      res.json(await groups.list(ctxOf(req), { q, ...pageRequest(req.query) }));
    },
    async createGroup(req, res) {
      const input = { isDefault: false, fullAccess: false, ...body<Partial<GroupBody>>(req) } as GroupBody;
      res.status(201).json(await groups.create(ctxOf(req), input));
    },
    async getGroup(req, res) {
      res.json(await groups.get(ctxOf(req), groupId(req)));
    },
    async updateGroup(req, res) {
      res.json(await groups.update(ctxOf(req), groupId(req), body<GroupBody>(req)));
    },
    async deleteGroup(req, res) {
      res.json(await groups.remove(ctxOf(req), groupId(req)));
    },
    async addUserToGroup(req, res) {
      res.json(await groups.assignUser(ctxOf(req), groupId(req), body<{ userId: string }>(req).userId));
    },
    async listGroupAgents(req, res) {
      res.json(await groupAgents.list(ctxOf(req), groupId(req)));
    },
    async addGroupAgent(req, res) {
      const { agentId } = body<{ agentId: string }>(req);
      const { mapping, created } = await groupAgents.add(ctxOf(req), groupId(req), agentId);
      res.status(created ? 201 : 200).json(mapping);
    },
    async removeGroupAgent(req, res) {
      res.json(await groupAgents.remove(ctxOf(req), groupId(req), param(req, 'agentId')));
    },
  };
}
