import { Router } from 'express';
import type { AgentBody } from '@lib/agents/agent-fields';
import type { AgentVisibility } from '@lib/db/agent.schema';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import { AgentsService } from '@lib/services/agents.service';
import { body, ctxOf, param } from '@api/context';

export function agentsRouter(deps: Deps): Router {
  const service = new AgentsService(deps.models);
  const router = Router();
  const base = '/orgs/:organizationId/agents';
  const one = `${base}/:agentId`;
  router.get(base, async (req, res) => {
    const { q, orderBy, all } = req.query as { q?: string; orderBy?: string; all?: unknown };
    const everyAgent = all === true || all === 'true';
    res.json(await service.list(ctxOf(req), { q, orderBy, all: everyAgent, ...pageRequest(req.query) }));
  });
  router.post(base, async (req, res) => {
    res.status(201).json(await service.create(ctxOf(req), body<AgentBody>(req)));
  });
  router.get(one, async (req, res) => {
    res.json(await service.get(ctxOf(req), param(req, 'agentId')));
  });
  router.put(one, async (req, res) => {
    res.json(await service.update(ctxOf(req), param(req, 'agentId'), body<AgentBody>(req)));
  });
  router.delete(one, async (req, res) => {
    res.json(await service.remove(ctxOf(req), param(req, 'agentId')));
  });
  router.put(`${one}/visibility`, async (req, res) => {
    const { visibility } = body<{ visibility: AgentVisibility }>(req);
    res.json(await service.setVisibility(ctxOf(req), param(req, 'agentId'), visibility));
  });
  router.get('/orgs/:organizationId/tools', (_req, res) => {
    res.json(service.tools());
  });
  return router;
}
