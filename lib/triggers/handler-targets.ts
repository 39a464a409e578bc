import type { AgentAccess } from '@lib/agents/agent-access';
import type { RequestContext } from '@lib/auth/context';
import { referenced } from '@lib/errors';
import type { Repositories } from '@lib/repositories';

export interface HandlerTargetIds {
  agentId?: string | null;
  actionChainId?: string | null;
  workflowId?: string | null;
}

/** What schedule and webhook handlers run: checked when a handler is saved, named when one is shown. */
export class HandlerTargets {
  constructor(
    private readonly repos: Repositories,
    private readonly access: AgentAccess,
  ) {}

  /** The handler runs with its creator's rights: they must be able to use the agent now. */
  async checkAgent(ctx: RequestContext, agentId: string) {
    await referenced('agentId', agentId, this.access.getAccessibleAgent(ctx, agentId));
  }

  /** `id` must be an action chain of the organization (`field` names where it was sent). */
  async checkChain(ctx: RequestContext, field: 'actionChainId' | 'workflowId', id: string) {
    await referenced(field, id, this.repos.tenant(ctx.organizationId).chains.get(id));
  }

  /** Current names of the agents and chains some handlers run (a renamed target shows its new name; a deleted
   * one shows null). */
  async names(organizationId: string, handlers: HandlerTargetIds[]) {
    const tenant = this.repos.tenant(organizationId);
    const agentIds = [...new Set(handlers.flatMap((h) => (h.agentId ? [h.agentId] : [])))];
    const chainIds = [
      ...new Set(handlers.flatMap((h) => [h.actionChainId, h.workflowId].filter((x): x is string => !!x))),
    ];
    const [agents, chains] = await Promise.all([
      agentIds.length ? tenant.agents.getMany(agentIds) : [],
      chainIds.length ? tenant.chains.getMany(chainIds) : [],
    ]);
    const agentNames = new Map(agents.map((a) => [a.agentId, a.name]));
    const chainNames = new Map(chains.map((c) => [c._id, c.name]));
    return {
      agent: (id: string | null | undefined) => (id ? (agentNames.get(id) ?? null) : null),
      chain: (id: string | null | undefined) => (id ? (chainNames.get(id) ?? null) : null),
    };
  }
}
