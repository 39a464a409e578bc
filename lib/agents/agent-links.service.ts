import type { RequestContext } from '@lib/auth/context';
import { badRequest, invalidReference, notFound } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import { toLinkView } from './agent-links.repository';
import type { AgentsService } from './agents.service';
import type { AgentsStore } from './store';

/** Upper bound on the agents a cycle check visits. */
const MAX_GRAPH_WALK = 10_000;

/** Agents attached to an agent (it may call them). Reads need read access to the agent; writes agents.manage. */
export class AgentLinksService {
  constructor(
    private readonly repos: Tenants<AgentsStore>,
    private readonly agents: AgentsService,
  ) {}

  private links(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).agentLinks;
  }

  async listAgentAttachments(ctx: RequestContext, agentId: string) {
    await this.agents.readable(ctx, agentId);
    const links = await this.links(ctx).list(agentId);
    const targets = await this.repos
      .tenant(ctx.organizationId)
      .agents.getMany(links.map((l) => l.targetAgentId));
    const names = new Map(targets.map((a) => [a.agentId, a.name]));
    return links
      .filter((l) => names.has(l.targetAgentId))
      .map((l) => toLinkView(l, names.get(l.targetAgentId)!));
  }

  async attachAgent(ctx: RequestContext, agentId: string, targetAgentId: string, instructions: string) {
    // The agent in the path first: a missing one is 404, whatever the body says.
    await this.agents.manageable(ctx, agentId);
    if (targetAgentId === agentId) throw badRequest('an agent cannot be attached to itself');
    const target = await this.repos.tenant(ctx.organizationId).agents.findOrMaterialise(targetAgentId);
    if (!target) throw invalidReference('targetAgentId', targetAgentId);
    if (await this.reaches(ctx, targetAgentId, agentId)) {
      throw badRequest(
        `attaching ${targetAgentId} would create a cycle: it already calls ${agentId}, directly or not`,
      );
    }
    return toLinkView(await this.links(ctx).create(agentId, targetAgentId, instructions), target.name);
  }

  async updateAgentAttachment(
    ctx: RequestContext,
    agentId: string,
    targetAgentId: string,
    instructions: string,
  ) {
    await this.agents.manageable(ctx, agentId);
    const link = await this.links(ctx).update(agentId, targetAgentId, instructions);
    const target = link && (await this.repos.tenant(ctx.organizationId).agents.get(targetAgentId));
    if (!link || !target) throw notFound('agent attachment');
    return toLinkView(link, target.name);
  }

  async detachAgent(ctx: RequestContext, agentId: string, targetAgentId: string) {
    await this.agents.manageable(ctx, agentId);
    if (!(await this.links(ctx).remove(agentId, targetAgentId))) throw notFound('agent attachment');
    return { organizationId: ctx.organizationId, agentId, targetAgentId };
  }

  /** Whether `from` can already call `to` through attachments (so `to` → `from` would close a loop). */
  private async reaches(ctx: RequestContext, from: string, to: string): Promise<boolean> {
    const seen = new Set([from]);
    let frontier = [from];
    while (frontier.length > 0 && seen.size < MAX_GRAPH_WALK) {
      const next = (await this.links(ctx).targetsOf(frontier)).filter((id) => !seen.has(id));
      if (next.includes(to)) return true;
      next.forEach((id) => seen.add(id));
      frontier = [...new Set(next)];
    }
    return false;
  }

  /** The agents an agent may call, in attachment order, with no access check (its model tools). */
  async callableFrom(organizationId: string, agentId: string) {
    const tenant = this.repos.tenant(organizationId);
    const links = await tenant.agentLinks.list(agentId);
    const targets = links.length ? await tenant.agents.getMany(links.map((l) => l.targetAgentId)) : [];
    const byId = new Map(targets.map((a) => [a.agentId, a]));
    return links.flatMap((link) => {
      const agent = byId.get(link.targetAgentId);
      return agent ? [{ agent, instructions: link.instructions }] : [];
    });
  }
}
