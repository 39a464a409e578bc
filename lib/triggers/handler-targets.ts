import type { AgentAccess } from '@lib/agents/agent-access';
import type { AgentsService } from '@lib/agents/agents.service';
import type { RequestContext } from '@lib/auth/context';
import type { ChainsService } from '@lib/chains/chains.service';
import { referenced } from '@lib/errors';

export interface HandlerTargetIds {
  agentId?: string | null;
  actionChainId?: string | null;
  workflowId?: string | null;
}

/** What schedule and webhook handlers run: checked when a handler is saved, named when one is shown. */
export class HandlerTargets {
  constructor(
    private readonly agents: Pick<AgentsService, 'getMany'>,
    private readonly chains: Pick<ChainsService, 'chain' | 'getMany'>,
    private readonly access: AgentAccess,
  ) {}

  /** The handler runs with its creator's rights: they must be able to use the agent now. */
  async checkAgent(ctx: RequestContext, agentId: string) {
    await referenced('agentId', agentId, this.access.getAccessibleAgent(ctx, agentId));
  }

  /** `id` must be an action chain of the organization (`field` names where it was sent). */
  async checkChain(ctx: RequestContext, field: 'actionChainId' | 'workflowId', id: string) {
    await referenced(field, id, this.chains.chain(ctx, id));
  }

  /** Current names of the agents and chains some handlers run (a renamed target shows its new name; a deleted
   * one shows null). */
  async names(organizationId: string, handlers: HandlerTargetIds[]) {
    const agentIds = [...new Set(handlers.flatMap((h) => (h.agentId ? [h.agentId] : [])))];
    const chainIds = [
      ...new Set(handlers.flatMap((h) => [h.actionChainId, h.workflowId].filter((x): x is string => !!x))),
    ];
    const [agents, chains] = await Promise.all([
      agentIds.length ? this.agents.getMany(organizationId, agentIds) : [],
      chainIds.length ? this.chains.getMany(organizationId, chainIds) : [],
    ]);
    const agentNames = new Map(agents.map((a) => [a.agentId, a.name]));
    const chainNames = new Map(chains.map((c) => [c._id, c.name]));
    return {
      agent: (id: string | null | undefined) => (id ? (agentNames.get(id) ?? null) : null),
      chain: (id: string | null | undefined) => (id ? (chainNames.get(id) ?? null) : null),
    };
  }
}
