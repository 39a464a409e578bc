import type { Request } from 'express';
import type { Deps } from '@lib/deps';
import type { EtlRuleBody } from '@lib/knowledge-bases/etl-rules.service';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

const kbId = (req: Request) => param(req, 'knowledgeBaseId');
const etlId = (req: Request) => param(req, 'etlId');

export function etlRulesHandlers(deps: Deps): OperationHandlers {
  const { etlRules, agentKnowledgeBases } = deps.services;
  return {
    async listEtlRules(req, res) {
      res.json(await etlRules.list(ctxOf(req), kbId(req)));
    },
    async createEtlRule(req, res) {
      res.status(201).json(await etlRules.create(ctxOf(req), kbId(req), body<EtlRuleBody>(req)));
    },
    async getEtlRule(req, res) {
      res.json(await etlRules.get(ctxOf(req), kbId(req), etlId(req)));
    },
    async updateEtlRule(req, res) {
      res.json(await etlRules.update(ctxOf(req), kbId(req), etlId(req), body<EtlRuleBody>(req)));
    },
    async deleteEtlRule(req, res) {
      res.json(await etlRules.remove(ctxOf(req), kbId(req), etlId(req)));
    },
    async listAgentKnowledgeBases(req, res) {
      res.json(await agentKnowledgeBases.list(ctxOf(req), param(req, 'agentId')));
    },
    async attachAgentKnowledgeBase(req, res) {
      const { knowledgeBaseId, kbOrganizationId } = body<{
        knowledgeBaseId: string;
        kbOrganizationId?: string;
      }>(req);
      res
        .status(201)
        .json(
          await agentKnowledgeBases.attach(
            ctxOf(req),
            param(req, 'agentId'),
            knowledgeBaseId,
            kbOrganizationId,
          ),
        );
    },
    async detachAgentKnowledgeBase(req, res) {
      res.json(await agentKnowledgeBases.detach(ctxOf(req), param(req, 'agentId'), kbId(req)));
    },
  };
}
