import type { RequestContext } from '@lib/auth/context';
import { validateToolConfiguration } from '@lib/agents/tool-catalogue';
import type { Models } from '@lib/db/models';
import { badRequest, conflict, notFound } from '@lib/errors';
import {
  AgentLinksRepository,
  AgentToolsRepository,
  toLinkView,
  toToolAttachmentView,
} from '@lib/repositories/agent-attachments.repository';
import { AgentsRepository } from '@lib/repositories/agents.repository';
import { AgentsService } from './agents.service';

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;
/** Upper bound on the agents a cycle check visits. */
const MAX_GRAPH_WALK = 10_000;

/** Tools and other agents attached to an agent. Reads need read access to the agent; writes agents.manage. */
export class AgentAttachmentsService {
  private readonly agents: AgentsService;

  constructor(private readonly models: Models) {
    this.agents = new AgentsService(models);
  }

  private tools(ctx: RequestContext) {
    return new AgentToolsRepository(this.models, ctx.organizationId);
  }

  private links(ctx: RequestContext) {
    return new AgentLinksRepository(this.models, ctx.organizationId);
  }

  async listTools(ctx: RequestContext, agentId: string) {
    await this.agents.readable(ctx, agentId);
    return (await this.tools(ctx).list(agentId)).map(toToolAttachmentView);
  }

  async attachTool(ctx: RequestContext, agentId: string, toolCode: string, configuration: unknown = {}) {
    await this.agents.manageable(ctx, agentId);
    validateToolConfiguration(toolCode, configuration);
    try {
      return toToolAttachmentView(await this.tools(ctx).create(agentId, toolCode, configuration));
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      throw conflict(`${toolCode} is already attached to this agent; PUT …/tools/${toolCode} changes it`);
    }
  }

  async updateTool(
    ctx: RequestContext,
    agentId: string,
    toolCode: string,
    body: { toolCode?: string; configuration: unknown },
  ) {
    if (body.toolCode !== undefined && body.toolCode !== toolCode) {
      throw badRequest(`toolCode in the body (${body.toolCode}) differs from the path (${toolCode})`);
    }
    await this.agents.manageable(ctx, agentId);
    validateToolConfiguration(toolCode, body.configuration);
    const updated = await this.tools(ctx).update(agentId, toolCode, body.configuration);
    if (!updated) throw notFound('tool attachment');
    return toToolAttachmentView(updated);
  }

  async detachTool(ctx: RequestContext, agentId: string, toolCode: string) {
    await this.agents.manageable(ctx, agentId);
    if (!(await this.tools(ctx).remove(agentId, toolCode))) throw notFound('tool attachment');
    return { organizationId: ctx.organizationId, agentId, toolCode };
  }

  async listAgents(ctx: RequestContext, agentId: string) {
    await this.agents.readable(ctx, agentId);
    const links = await this.links(ctx).list(agentId);
    const targets = await new AgentsRepository(this.models, ctx.organizationId).getMany(
      links.map((l) => l.targetAgentId),
    );
    const names = new Map(targets.map((a) => [a.agentId, a.name]));
    return links
      .filter((l) => names.has(l.targetAgentId))
      .map((l) => toLinkView(l, names.get(l.targetAgentId)!));
  }

  async attachAgent(ctx: RequestContext, agentId: string, targetAgentId: string, instructions: string) {
    if (targetAgentId === agentId) throw badRequest('an agent cannot be attached to itself');
    await this.agents.manageable(ctx, agentId);
    const target = await new AgentsRepository(this.models, ctx.organizationId).findOrMaterialise(
      targetAgentId,
    );
    if (!target) throw notFound('target agent');
    if (await this.reaches(ctx, targetAgentId, agentId)) {
      throw badRequest(
        `attaching ${targetAgentId} would create a cycle: it already calls ${agentId}, directly or not`,
      );
    }
    try {
      return toLinkView(await this.links(ctx).create(agentId, targetAgentId, instructions), target.name);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      throw conflict(`${targetAgentId} is already attached to this agent; PUT changes its instructions`);
    }
  }

  async updateAgentLink(ctx: RequestContext, agentId: string, targetAgentId: string, instructions: string) {
    await this.agents.manageable(ctx, agentId);
    const link = await this.links(ctx).update(agentId, targetAgentId, instructions);
    const target = link && (await new AgentsRepository(this.models, ctx.organizationId).get(targetAgentId));
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
}
