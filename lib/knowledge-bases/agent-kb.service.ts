import type { AgentsService } from '@lib/agents/agents.service';
import type { RequestContext } from '@lib/auth/context';
import { notFound, referenced } from '@lib/errors';
import type { KnowledgeBasesCrossOrg } from './public-knowledge-bases.repository';
import type { Tenants } from '@lib/db/tenants';
import type { KbAccess } from './kb-access';
import type { KnowledgeBasesStore } from './store';
import { toAgentKbView } from './views';

/** Knowledge bases attached to agents: reads need read access to the agent, changes agents.manage. */
export class AgentKnowledgeBasesService {
  constructor(
    private readonly repos: Tenants<KnowledgeBasesStore> & { publicKnowledgeBases: KnowledgeBasesCrossOrg },
    private readonly agents: AgentsService,
    private readonly access: KbAccess,
  ) {}

  private attachments(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).agentKnowledgeBases;
  }

  async list(ctx: RequestContext, agentId: string) {
    await this.agents.readable(ctx, agentId);
    const knowledgebases = (await this.attachments(ctx).list(agentId)).map(toAgentKbView);
    return { organizationId: ctx.organizationId, agentId, knowledgebases };
  }

  /** Own knowledge bases the caller can read, or another organization's public one. */
  async attach(ctx: RequestContext, agentId: string, knowledgeBaseId: string, kbOrganizationId?: string) {
    await this.agents.manageable(ctx, agentId);
    const kbOrg = kbOrganizationId ?? ctx.organizationId;
    const kb = await referenced(
      'knowledgeBaseId',
      knowledgeBaseId,
      kbOrg === ctx.organizationId
        ? this.access.readable(ctx, knowledgeBaseId)
        : this.repos.publicKnowledgeBases.findPublicKnowledgeBaseCrossOrg(kbOrg, knowledgeBaseId),
    );
    const attachment = await this.attachments(ctx).create({
      agentId,
      knowledgeBaseId,
      kbOrganizationId: kbOrg,
      kbTitle: kb.title,
      creatorUserId: ctx.userId,
    });
    return toAgentKbView(attachment);
  }

  async detach(ctx: RequestContext, agentId: string, knowledgeBaseId: string) {
    await this.agents.manageable(ctx, agentId);
    if (!(await this.attachments(ctx).remove(agentId, knowledgeBaseId)))
      throw notFound('knowledge base attachment');
    return { organizationId: ctx.organizationId, agentId, knowledgeBaseId };
  }

  /** The titles of the knowledge bases attached to an agent, with no access check (its model tools). */
  async titlesForAgent(organizationId: string, agentId: string): Promise<string[]> {
    return (await this.repos.tenant(organizationId).agentKnowledgeBases.list(agentId)).map((a) => a.kbTitle);
  }

  /** An agent's knowledge base attachments go with it (lib/agents/agents.service.ts). */
  async removeForAgent(organizationId: string, agentId: string): Promise<void> {
    await this.repos.tenant(organizationId).agentKnowledgeBases.removeForAgent(agentId);
  }
}
