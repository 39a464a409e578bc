import type { Deps } from '@lib/deps';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function toolsHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.agentTools;
  const agentId = (req: Parameters<typeof param>[0]) => param(req, 'agentId');
  return {
    listTools(_req, res) {
      res.json(service.listTools());
    },
    async listAgentTools(req, res) {
      res.json(await service.listAgentTools(ctxOf(req), agentId(req)));
    },
    async attachAgentTool(req, res) {
      const { toolCode, configuration } = body<{ toolCode: string; configuration?: unknown }>(req);
      res.status(201).json(await service.attachAgentTool(ctxOf(req), agentId(req), toolCode, configuration));
    },
    async updateAgentTool(req, res) {
      const input = body<{ toolCode?: string; configuration: unknown }>(req);
      res.json(await service.updateAgentTool(ctxOf(req), agentId(req), param(req, 'toolCode'), input));
    },
    async detachAgentTool(req, res) {
      res.json(await service.detachAgentTool(ctxOf(req), agentId(req), param(req, 'toolCode')));
    },
  };
}
