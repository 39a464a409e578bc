import type { Request } from 'express';
import type { ChainBody } from '@lib/chains/chains.service';
import type { RunBody } from '@lib/chains/chain-runs.service';
import type { StepAttachmentKind } from '@lib/chains/step-attachment.schema';
import type { StepBody } from '@lib/chains/step-fields';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

const chainId = (req: Request) => param(req, 'actionChainId');
const stepId = (req: Request) => param(req, 'stepId');
type ListQuery = { limit?: number; cursor?: number; orderBy?: string; inputType?: string };

export function chainsHandlers(deps: Deps): OperationHandlers {
  const { chains, chainRuns, chainAttachments: attachments } = deps.services;

  /** The four operations of one kind of step attachment (agents, knowledge bases). */
  const stepAttachment = (kind: StepAttachmentKind, idParam: string, bodyField: string) => ({
    list: (async (req, res) => {
      res.json(await attachments.listForStep(ctxOf(req), chainId(req), stepId(req), kind));
    }) as OperationHandlers[string],
    attach: (async (req, res) => {
      const id = body<Record<string, string>>(req)[bodyField]!;
      res.status(201).json(await attachments.attachToStep(ctxOf(req), chainId(req), stepId(req), kind, id));
    }) as OperationHandlers[string],
    get: (async (req, res) => {
      res.json(
        await attachments.getForStep(ctxOf(req), chainId(req), stepId(req), kind, param(req, idParam)),
      );
    }) as OperationHandlers[string],
    detach: (async (req, res) => {
      res.json(
        await attachments.detachFromStep(ctxOf(req), chainId(req), stepId(req), kind, param(req, idParam)),
      );
    }) as OperationHandlers[string],
  });
  const agents = stepAttachment('agent', 'agentId', 'agentId');
  const kbs = stepAttachment('knowledge-base', 'knowledgeBaseId', 'knowledgeBaseId');

  return {
    async listChains(req, res) {
      const q = req.query as ListQuery;
      res.json(
        await chains.list(ctxOf(req), { ...pageRequest(q), orderBy: q.orderBy, inputType: q.inputType }),
      );
    },
    async createChain(req, res) {
      res.status(201).json(await chains.create(ctxOf(req), body<ChainBody>(req)));
    },
    async getChain(req, res) {
      res.json(await chains.get(ctxOf(req), chainId(req)));
    },
    async updateChain(req, res) {
      res.json(await chains.update(ctxOf(req), chainId(req), body<ChainBody>(req)));
    },
    async deleteChain(req, res) {
      res.json(await chains.remove(ctxOf(req), chainId(req)));
    },
    async runChain(req, res) {
      const reset = (req.query as { resetToRunning?: boolean }).resetToRunning === true;
      res.status(202).json(await chainRuns.run(ctxOf(req), chainId(req), body<RunBody>(req) ?? {}, reset));
    },
    async listChainRuns(req, res) {
      const q = req.query as ListQuery;
      res.json(await chainRuns.list(ctxOf(req), chainId(req), { ...pageRequest(q), orderBy: q.orderBy }));
    },
    async getChainRun(req, res) {
      res.json(await chainRuns.get(ctxOf(req), chainId(req), param(req, 'runId')));
    },
    async listChainSteps(req, res) {
      res.json(await chains.listSteps(ctxOf(req), chainId(req)));
    },
    async createChainStep(req, res) {
      res.status(201).json(await chains.createStep(ctxOf(req), chainId(req), body<StepBody>(req)));
    },
    async getChainStep(req, res) {
      res.json(await chains.getStep(ctxOf(req), chainId(req), stepId(req)));
    },
    async updateChainStep(req, res) {
      res.json(await chains.updateStep(ctxOf(req), chainId(req), stepId(req), body<StepBody>(req)));
    },
    async deleteChainStep(req, res) {
      res.json(await chains.removeStep(ctxOf(req), chainId(req), stepId(req)));
    },
    listChainStepAgents: agents.list,
    attachChainStepAgent: agents.attach,
    getChainStepAgent: agents.get,
    detachChainStepAgent: agents.detach,
    listChainStepKnowledgeBases: kbs.list,
    attachChainStepKnowledgeBase: kbs.attach,
    getChainStepKnowledgeBase: kbs.get,
    detachChainStepKnowledgeBase: kbs.detach,
    async listChainStepTools(req, res) {
      res.json(await attachments.listForStep(ctxOf(req), chainId(req), stepId(req), 'tool'));
    },
    async attachChainStepTool(req, res) {
      const { toolCode, config } = body<{ toolCode: string; config: Record<string, unknown> }>(req);
      res
        .status(201)
        .json(
          await attachments.attachToStep(ctxOf(req), chainId(req), stepId(req), 'tool', toolCode, config),
        );
    },
    async getChainStepTool(req, res) {
      res.json(
        await attachments.getForStep(ctxOf(req), chainId(req), stepId(req), 'tool', param(req, 'toolCode')),
      );
    },
    async updateChainStepTool(req, res) {
      const { config } = body<{ config: Record<string, unknown> }>(req);
      res.json(
        await attachments.updateStepTool(
          ctxOf(req),
          chainId(req),
          stepId(req),
          param(req, 'toolCode'),
          config,
        ),
      );
    },
    async detachChainStepTool(req, res) {
      res.json(
        await attachments.detachFromStep(
          ctxOf(req),
          chainId(req),
          stepId(req),
          'tool',
          param(req, 'toolCode'),
        ),
      );
    },
    async listAgentChains(req, res) {
      res.json(await attachments.listForAgent(ctxOf(req), param(req, 'agentId')));
    },
    async attachAgentChain(req, res) {
      const { actionChainId } = body<{ actionChainId: string }>(req);
      res.status(201).json(await attachments.attachToAgent(ctxOf(req), param(req, 'agentId'), actionChainId));
    },
    async detachAgentChain(req, res) {
      res.json(await attachments.detachFromAgent(ctxOf(req), param(req, 'agentId'), chainId(req)));
    },
  };
}
