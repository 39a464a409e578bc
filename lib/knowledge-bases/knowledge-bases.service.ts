import {
  WORKFLOWS,
  workflowIds,
  type CopyKnowledgeBaseWorkflow,
  type PurgeKnowledgeWorkflow,
} from '@contracts';
import type { AgentsService } from '@lib/agents/agents.service';
import type { RequestContext } from '@lib/auth/context';
import { ROLE_CAPABILITIES } from '@lib/auth/roles';
import { AppError, forbidden, invalidReference, notFound, referenced } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, parseOrderBy, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import type { Role } from '@lib/users/member.schema';
import type { EmbeddingModelRef } from '@lib/vectors/vector-store';
import type { KbAccess } from './kb-access';
import type { KbOrderField } from './knowledge-bases.repository';
import type { KnowledgeBaseDoc, KnowledgeBaseType } from './knowledge-base.schema';
import type { ParseStrategy } from './parsing/types';
import type { KnowledgeBasesStore } from './store';
import { toKnowledgeBaseView } from './views';

export interface KnowledgeBaseBody {
  title: string;
  llmDescription: string;
  type?: KnowledgeBaseType;
  parseStrategy?: ParseStrategy;
  folder?: string | null;
  isPublic?: boolean;
}

export interface KbListOptions extends PageRequest {
  q?: string;
  folder?: string;
  orderBy?: string;
  forAgentId?: string;
  includePersonalKBs?: boolean;
}

/** The id of an agent's personal knowledge base: deterministic, so it is created once. */
export const agentKnowledgeBaseId = (agentId: string) => `kbagent_${agentId}`;

/** Whether an organization may publish (the organization feature's setting). */
export interface PublishingSetting {
  hostsPublicContent(organizationId: string): Promise<boolean>;
}

/** A user's membership of an organization, or null (the users feature). */
export interface Memberships {
  member(organizationId: string, userId: string): Promise<{ role: Role } | null>;
}

export class KnowledgeBasesService {
  constructor(
    private readonly repos: Tenants<KnowledgeBasesStore>,
    private readonly access: KbAccess,
    private readonly agents: Pick<AgentsService, 'readable'>,
    /** Other features' data, reached through their services (wired in lib/services.ts). */
    private readonly organization: PublishingSetting,
    private readonly members: Memberships,
    private readonly temporal: TemporalDeps,
    /** The embedding model new knowledge bases record. */
    private readonly embeddingModel: EmbeddingModelRef,
  ) {}

  private repo(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).knowledgeBases;
  }

  async list(ctx: RequestContext, opts: KbListOptions) {
    if (opts.forAgentId) {
      const kb = await this.forAgent(ctx, opts.forAgentId);
      return page([toKnowledgeBaseView(kb)], 1, 0);
    }
    const { items, total } = await this.repo(ctx).list({
      q: opts.q,
      folder: opts.folder,
      ...parseOrderBy<KbOrderField>(opts.orderBy, 'title'),
      includePersonal: opts.includePersonalKBs ?? false,
      personal: await this.access.personalScope(ctx),
      limit: opts.limit,
      offset: opts.offset,
    });
    return page(items.map(toKnowledgeBaseView), total, opts.offset);
  }

  /** The agent's personal knowledge base, created on first use (concurrent first calls create one). */
  private async forAgent(ctx: RequestContext, agentId: string): Promise<KnowledgeBaseDoc> {
    const agent = await referenced('forAgentId', agentId, this.agents.readable(ctx, agentId));
    const id = agentKnowledgeBaseId(agent.agentId);
    const kb = await this.repo(ctx).findOrCreate(id, () =>
      this.repo(ctx).create(id, {
        type: 'PERSONAL',
        title: `${agent.name} (personal)`,
        llmDescription: `Documents of the agent ${agent.name}`,
        creatorUserId: ctx.userId,
        agentId: agent.agentId,
        ...this.modelFields(),
      }),
    );
    if (kb.deletedAt) throw notFound('knowledge base (it is being deleted; retry shortly)');
    return kb;
  }

  private modelFields() {
    return { embeddingModel: this.embeddingModel.id, embeddingDimensions: this.embeddingModel.dimensions };
  }

  private async checkPublish(ctx: RequestContext, isPublic: boolean | undefined) {
    if (!isPublic) return;
    if (!this.access.isManager(ctx))
      throw forbidden('publishing a knowledge base needs the admin or owner role');
    // Like an agent's visibility: the request is fine, the organization may not do it (a 403, not a 400).
    if (!(await this.organization.hostsPublicContent(ctx.organizationId))) {
      throw forbidden(
        'this organization is not configured to host public content, so its knowledge bases cannot be public; ' +
          'an operator enables it with `npm run cli -- org-public --org <organizationId> --enabled true`',
      );
    }
  }

  async create(ctx: RequestContext, body: KnowledgeBaseBody) {
    const type = body.type ?? 'ORGANIZATION';
    if (type === 'ORGANIZATION' && !this.access.isManager(ctx))
      throw forbidden('creating an organization knowledge base needs the admin or owner role');
    await this.checkPublish(ctx, body.isPublic);
    const kb = await this.repo(ctx).create(newId('kb'), {
      type,
      title: body.title.trim(),
      llmDescription: body.llmDescription,
      parseStrategy: body.parseStrategy ?? 'auto',
      folder: body.folder ?? null,
      isPublic: body.isPublic ?? false,
      creatorUserId: ctx.userId,
      agentId: null,
      ...this.modelFields(),
    });
    return toKnowledgeBaseView(kb);
  }

  async get(ctx: RequestContext, knowledgeBaseId: string) {
    return toKnowledgeBaseView(await this.access.readable(ctx, knowledgeBaseId));
  }

  async update(ctx: RequestContext, knowledgeBaseId: string, body: KnowledgeBaseBody) {
    await this.access.writable(ctx, knowledgeBaseId);
    await this.checkPublish(ctx, body.isPublic);
    const set: Partial<KnowledgeBaseDoc> = { title: body.title.trim(), llmDescription: body.llmDescription };
    if (body.parseStrategy !== undefined) set.parseStrategy = body.parseStrategy;
    if (body.folder !== undefined) set.folder = body.folder;
    if (body.isPublic !== undefined) set.isPublic = body.isPublic;
    const updated = await this.repo(ctx).update(knowledgeBaseId, set);
    if (!updated) throw notFound('knowledge base');
    return toKnowledgeBaseView(updated);
  }

  /** Hides the knowledge base at once; a durable workflow removes its files, vectors, rules and attachments. */
  async remove(ctx: RequestContext, knowledgeBaseId: string) {
    await this.access.writable(ctx, knowledgeBaseId);
    if (!(await this.repo(ctx).markDeleted(knowledgeBaseId))) throw notFound('knowledge base');
    await startIdempotent<PurgeKnowledgeWorkflow>(this.temporal, WORKFLOWS.purgeKnowledge, {
      workflowId: workflowIds.purgeKnowledgeBase(ctx.organizationId, knowledgeBaseId),
      args: [{ organizationId: ctx.organizationId, knowledgeBaseId }],
      attributes: { organizationId: ctx.organizationId, knowledgeBaseId },
    });
    return { message: 'the knowledge base and its files are being deleted', knowledgeBaseId };
  }

  /**
   * Copies a knowledge base to another organization where the caller may manage knowledge bases. Only a user
   * session crosses organizations: an API key, an assume-role token or an app session belongs to the one
   * organization it was made in, so it is refused before the destination is even looked at.
   */
  async copyToOrganization(ctx: RequestContext, knowledgeBaseId: string, toOrganizationId: string) {
    await this.access.readable(ctx, knowledgeBaseId);
    if (ctx.via !== 'session')
      throw new AppError(
        403,
        'session_required',
        'copying to another organization needs a signed-in user session: an API key or token belongs to one organization',
      );
    const member = await this.members.member(toOrganizationId, ctx.userId);
    if (!member) throw invalidReference('toOrganizationId', toOrganizationId);
    if (!ROLE_CAPABILITIES[member.role].has('knowledge_bases.manage'))
      throw forbidden('copying needs the admin or owner role in the destination organization');
    const messageId = newId('msg');
    await startIdempotent<CopyKnowledgeBaseWorkflow>(this.temporal, WORKFLOWS.copyKnowledgeBase, {
      workflowId: workflowIds.copyKnowledgeBase(ctx.organizationId, messageId),
      // The source's organization and knowledge base; the copy's ingestions carry the destination's.
      attributes: { organizationId: ctx.organizationId, knowledgeBaseId },
      args: [
        {
          organizationId: ctx.organizationId,
          knowledgeBaseId,
          toOrganizationId,
          messageId,
          userId: ctx.userId,
        },
      ],
    });
    return { messageId };
  }

  /** The titles of those of `knowledgeBaseIds` that exist, in order: a chain step's search tool names them. */
  async titlesOf(organizationId: string, knowledgeBaseIds: string[]): Promise<string[]> {
    const kbs = this.repos.tenant(organizationId).knowledgeBases;
    const found = await Promise.all(knowledgeBaseIds.map((id) => kbs.get(id)));
    return found.flatMap((kb) => (kb ? [kb.title] : []));
  }

  /** A knowledge base by id for another feature's internal use (no access check; null when there is none). */
  find(organizationId: string, knowledgeBaseId: string) {
    return this.repos.tenant(organizationId).knowledgeBases.get(knowledgeBaseId);
  }
}
