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
 * The tools a model sees for an agent: its attached registry tools, one `ask_<agentId>` per agent attached to
 * it (the attachment alone makes the agent callable, as the spec's "attached … other agents" reads), `search_knowledge_bases` when knowledge bases are attached, and one
 * `run_chain_<actionChainId>` per attached action chain (its parameters: the chain's first step's inputSchema).
 */
export async function loadModelTools(tenant: TenantRepositories, agentId: string): Promise<ModelTool[]> {
  const [attachments, knowledgeBases, chainLinks] = await Promise.all([
    tenant.toolAttachments.list(agentId),
    tenant.agentKnowledgeBases.list(agentId),
    tenant.chainAttachments.listForAgent(agentId),
  ]);
  const links = await tenant.agentLinks.list(agentId);
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
  const knowledge = knowledgeBases.length ? [kbSearchModelTool(knowledgeBases.map((a) => a.kbTitle))] : [];
  return [
    ...server,
    ...agents,
    ...knowledge,
    ...(await chainTools(
      tenant,
      chainLinks.map((l) => l.actionChainId),
    )),
  ];
}

async function chainTools(tenant: TenantRepositories, chainIds: string[]): Promise<ModelTool[]> {
  if (!chainIds.length) return [];
  const chains = await tenant.chains.getMany(chainIds);
  return Promise.all(
    chains.map(async (chain): Promise<ModelTool> => {
      const steps = (await tenant.chains.listSteps(chain._id)).filter((s) => s.enabled);
      const schema = steps[0]?.inputSchemaJson;
      return {
        name: `run_chain_${chain._id}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64),
        description: `Run the action chain "${chain.name}": ${chain.description}`.trim(),
        parameters: schema
          ? (JSON.parse(schema) as Record<string, unknown>)
          : { type: 'object', properties: {} },
        executor: 'chain',
        targetChainId: chain._id,
      };
    }),
  );
}
