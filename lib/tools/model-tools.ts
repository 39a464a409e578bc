import type { ModelTool } from '@contracts';
import type { Tenants } from '@lib/db/tenants';
import { kbSearchModelTool } from '@lib/knowledge-bases/search-tool';
import { modelToolOf } from './registry';
import type { ToolsStore } from './store';

const askParameters = {
  type: 'object',
  properties: { message: { type: 'string', description: 'What to ask or tell the agent' } },
  required: ['message'],
};

/**
 * What an agent has attached besides its registry tools, read from the features that own those attachments
 * (agents, knowledge bases, chains) with no access check: the caller checked the agent. Chains sit above
 * tools, so all of them are reached through this port, wired in lib/services.ts.
 */
export interface ModelToolSources {
  agentLinks: {
    /** The agents it may call, with the instructions of each attachment. */
    callableFrom(
      organizationId: string,
      agentId: string,
    ): Promise<
      Array<{ agent: { agentId: string; name: string; description: string }; instructions: string }>
    >;
  };
  knowledgeBases: {
    /** The titles of its attached knowledge bases. */
    titlesForAgent(organizationId: string, agentId: string): Promise<string[]>;
  };
  chains: {
    chainIdsOfAgent(organizationId: string, agentId: string): Promise<string[]>;
    getMany(
      organizationId: string,
      actionChainIds: string[],
    ): Promise<Array<{ _id: string; name: string; description: string }>>;
    storedSteps(
      organizationId: string,
      actionChainId: string,
    ): Promise<Array<{ enabled: boolean; inputSchemaJson?: string | null }>>;
  };
}

/**
 * The tools a model sees for an agent: its attached registry tools, one `ask_<agentId>` per agent attached to
 * it (the attachment alone makes the agent callable, as the spec's "attached … other agents" reads), `search_knowledge_bases` when knowledge bases are attached, and one
 * `run_chain_<actionChainId>` per attached action chain (its parameters: the chain's first step's inputSchema).
 */
export class ModelTools {
  constructor(
    private readonly repos: Tenants<ToolsStore>,
    private readonly sources: ModelToolSources,
  ) {}

  async forAgent(organizationId: string, agentId: string): Promise<ModelTool[]> {
    const [attachments, titles, chainIds, callable] = await Promise.all([
      this.repos.tenant(organizationId).toolAttachments.list(agentId),
      this.sources.knowledgeBases.titlesForAgent(organizationId, agentId),
      this.sources.chains.chainIdsOfAgent(organizationId, agentId),
      this.sources.agentLinks.callableFrom(organizationId, agentId),
    ]);
    const server = attachments.map((a) => modelToolOf(a.toolCode)).filter((t): t is ModelTool => t !== null);
    const agents = callable.map(({ agent, instructions }): ModelTool => ({
      name: `ask_${agent.agentId}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64),
      description: `Ask the agent "${agent.name}" (${agent.description}). ${instructions}`.trim(),
      parameters: askParameters,
      executor: 'agent',
      targetAgentId: agent.agentId,
    }));
    const knowledge = titles.length ? [kbSearchModelTool(titles)] : [];
    return [...server, ...agents, ...knowledge, ...(await this.chainTools(organizationId, chainIds))];
  }

  private async chainTools(organizationId: string, chainIds: string[]): Promise<ModelTool[]> {
    if (!chainIds.length) return [];
    const { chains } = this.sources;
    return Promise.all(
      (await chains.getMany(organizationId, chainIds)).map(async (chain): Promise<ModelTool> => {
        const steps = (await chains.storedSteps(organizationId, chain._id)).filter((s) => s.enabled);
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
}
