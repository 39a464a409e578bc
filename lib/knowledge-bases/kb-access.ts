import type { AgentAccess } from '@lib/agents/agent-access';
import type { RequestContext } from '@lib/auth/context';
import { forbidden, notFound } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import type { PersonalScope } from './knowledge-bases.repository';
import type { KnowledgeBaseDoc } from './knowledge-base.schema';
import type { KnowledgeBasesStore } from './store';

/*
 * Who reads and changes a knowledge base:
 *   - admins and owners (knowledge_bases.manage): every knowledge base of the organization;
 *   - any member: reads ORGANIZATION knowledge bases; reads and changes PERSONAL ones they created, and the
 *     personal knowledge base of an agent they may use.
 * A knowledge base the caller cannot read is 404, like a missing one; one they read but may not change is 403.
 */
export class KbAccess {
  constructor(
    private readonly repos: Tenants<KnowledgeBasesStore>,
    private readonly agents: AgentAccess,
  ) {}

  isManager(ctx: RequestContext) {
    return ctx.capabilities.has('knowledge_bases.manage');
  }

  /** Which personal knowledge bases the caller reads: undefined for managers (all). */
  async personalScope(ctx: RequestContext): Promise<PersonalScope | undefined> {
    if (this.isManager(ctx)) return undefined;
    return { userId: ctx.userId, agentIds: await this.agents.accessibleAgentIds(ctx) };
  }

  private async canRead(ctx: RequestContext, kb: KnowledgeBaseDoc) {
    if (kb.type === 'ORGANIZATION' || this.isManager(ctx)) return true;
    if (kb.agentId) return this.agents.canAccessAgent(ctx, kb.agentId);
    return kb.creatorUserId === ctx.userId;
  }

  async readable(ctx: RequestContext, knowledgeBaseId: string): Promise<KnowledgeBaseDoc> {
    const kb = await this.repos.tenant(ctx.organizationId).knowledgeBases.get(knowledgeBaseId);
    if (!kb || !(await this.canRead(ctx, kb))) throw notFound('knowledge base');
    return kb;
  }

  async writable(ctx: RequestContext, knowledgeBaseId: string): Promise<KnowledgeBaseDoc> {
    const kb = await this.readable(ctx, knowledgeBaseId);
    if (kb.type === 'ORGANIZATION' && !this.isManager(ctx))
      throw forbidden('changing an organization knowledge base needs the admin or owner role');
    return kb;
  }
}
