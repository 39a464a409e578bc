import type { ModelTool } from '@contracts';
import type { TenantRepositories } from '@lib/repositories';
import { kbSearchModelTool } from '@lib/knowledge-bases/search-tool';
import { modelToolOf } from './registry';

const askParameters = {
  type: 'object',
  properties: { message: { type: 'string', description: 'What to ask or tell the agent' } },
  required: ['message'],
};

/**
 * The tools a model sees for an agent: its attached registry tools and, when `call_agent` is attached, one
 * `ask_<agentId>` per agent attached to it, and `search_knowledge_bases` when knowledge bases are attached.
 */
export async function loadModelTools(tenant: TenantRepositories, agentId: string): Promise<ModelTool[]> {
  const [attachments, knowledgeBases] = await Promise.all([
    tenant.toolAttachments.list(agentId),
    tenant.agentKnowledgeBases.list(agentId),
  ]);
  const links = attachments.some((a) => a.toolCode === 'call_agent')
    ? await tenant.agentLinks.list(agentId)
    : [];
  const targets = links.length ? await tenant.agents.getMany(links.map((l) => l.targetAgentId)) : [];
  const byId = new Map(targets.map((a) => [a.agentId, a]));
  const server = attachments.map((a) => modelToolOf(a.toolCode)).filter((t): t is ModelTool => t !== null);
  const agents = links.flatMap((link): ModelTool[] => {
    const target = byId.get(link.targetAgentId);
    if (!target) return [];
    return [
      {
        name: `ask_${target.agentId}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64),
        description: `Ask the agent "${target.name}" (${target.description}). ${link.instructions}`.trim(),
        parameters: askParameters,
        executor: 'agent',
        targetAgentId: target.agentId,
      },
    ];
  });
  const knowledge = knowledgeBases.length ? [kbSearchModelTool(knowledgeBases)] : [];
  return [...server, ...agents, ...knowledge];
}
