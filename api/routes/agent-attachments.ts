import { Router } from 'express';
import type { Deps } from '@lib/deps';
import { AgentAttachmentsService } from '@lib/services/agent-attachments.service';
import { body, ctxOf, param } from '@api/context';

export function agentAttachmentsRouter(deps: Deps): Router {
  const service = new AgentAttachmentsService(deps.models);
  const router = Router();
  const tools = '/orgs/:organizationId/agents/:agentId/tools';
  const agents = '/orgs/:organizationId/agents/:agentId/agent-attachments';
  const agentId = (req: Parameters<typeof param>[0]) => param(req, 'agentId');

  router.get(tools, async (req, res) => {
    res.json(await service.listTools(ctxOf(req), agentId(req)));
  });
  router.post(tools, async (req, res) => {
    const { toolCode, configuration } = body<{ toolCode: string; configuration?: unknown }>(req);
    res.status(201).json(await service.attachTool(ctxOf(req), agentId(req), toolCode, configuration));
  });
  router.put(`${tools}/:toolCode`, async (req, res) => {
    const input = body<{ toolCode?: string; configuration: unknown }>(req);
    res.json(await service.updateTool(ctxOf(req), agentId(req), param(req, 'toolCode'), input));
  });
  router.delete(`${tools}/:toolCode`, async (req, res) => {
    res.json(await service.detachTool(ctxOf(req), agentId(req), param(req, 'toolCode')));
  });

  router.get(agents, async (req, res) => {
    res.json(await service.listAgents(ctxOf(req), agentId(req)));
  });
  router.post(agents, async (req, res) => {
    const { targetAgentId, instructions } = body<{ targetAgentId: string; instructions: string }>(req);
    res.status(201).json(await service.attachAgent(ctxOf(req), agentId(req), targetAgentId, instructions));
  });
  router.put(`${agents}/:targetAgentId`, async (req, res) => {
    const { instructions } = body<{ instructions: string }>(req);
    const target = param(req, 'targetAgentId');
    res.json(await service.updateAgentLink(ctxOf(req), agentId(req), target, instructions));
  });
  router.delete(`${agents}/:targetAgentId`, async (req, res) => {
    res.json(await service.detachAgent(ctxOf(req), agentId(req), param(req, 'targetAgentId')));
  });
  return router;
}
