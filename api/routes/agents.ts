import type { AgentBody } from '@lib/agents/agent-fields';
import type { AgentVisibility } from '@lib/agents/agent.schema';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function agentsHandlers(deps: Deps): OperationHandlers {
  const { agents, agentLinks } = deps.services;
  const agentId = (req: Parameters<typeof param>[0]) => param(req, 'agentId');
  return {
    async listAgents(req, res) {
      const { q, orderBy, all } = req.query as { q?: string; orderBy?: string; all?: unknown };
      const everyAgent = all === true || all === 'true';
      res.json(await agents.list(ctxOf(req), { q, orderBy, all: everyAgent, ...pageRequest(req.query) }));
    },
    async createAgent(req, res) {
      res.status(201).json(await agents.create(ctxOf(req), body<AgentBody>(req)));
    },
    async getAgent(req, res) {
      res.json(await agents.get(ctxOf(req), agentId(req)));
    },
    async updateAgent(req, res) {
      res.json(await agents.update(ctxOf(req), agentId(req), body<AgentBody>(req)));
    },
    async deleteAgent(req, res) {
      res.json(await agents.remove(ctxOf(req), agentId(req)));
    },
    async setAgentVisibility(req, res) {
      const { visibility } = body<{ visibility: AgentVisibility }>(req);
      res.json(await agents.setVisibility(ctxOf(req), agentId(req), visibility));
    },
    async listAgentAttachments(req, res) {
      res.json(await agentLinks.listAgentAttachments(ctxOf(req), agentId(req)));
    },
    async attachAgent(req, res) {
      const { targetAgentId, instructions } = body<{ targetAgentId: string; instructions: string }>(req);
      res
        .status(201)
        .json(await agentLinks.attachAgent(ctxOf(req), agentId(req), targetAgentId, instructions));
    },
    async updateAgentAttachment(req, res) {
      const { instructions } = body<{ instructions: string }>(req);
      const target = param(req, 'targetAgentId');
      res.json(await agentLinks.updateAgentAttachment(ctxOf(req), agentId(req), target, instructions));
    },
    async detachAgent(req, res) {
      res.json(await agentLinks.detachAgent(ctxOf(req), agentId(req), param(req, 'targetAgentId')));
    },
  };
}
