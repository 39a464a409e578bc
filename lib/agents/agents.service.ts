import type { RequestContext } from '@lib/auth/context';
import { conflict, forbidden, invalidReference, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, parseOrderBy, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { AgentEmailsCrossOrg } from './agent-emails.repository';
import type { AgentAccess } from './agent-access';
import { addressOfUser, checkAgentEmailDomain } from './agent-email-domains';
import { agentFieldsFromBody, type AgentBody } from './agent-fields';
import { agentDocId, type AgentDoc, type AgentVisibility } from './agent.schema';
import { toAgentView, type AgentOrderField } from './agents.repository';
import type { AgentsStore } from './store';

export interface AgentListOptions extends PageRequest {
  q?: string;
  /** `name`, `created_at` or `updated_at`, optionally with `:asc` / `:desc` (validated by openapi.yaml). */
  orderBy?: string;
  all?: boolean;
}

/** Another feature's records of an agent (its tools, group mappings, knowledge bases, mail, chains). */
export interface AgentDependent {
  removeForAgent(organizationId: string, agentId: string): Promise<void>;
}

/** What agents need of the features around them, wired in lib/services.ts. */
export interface AgentNeighbours {
  /** What else goes when an agent goes. */
  dependents: AgentDependent[];
  /** Whether the organization may publish public content (false when there is no such organization). */
  organizations: { hostsPublicContent(organizationId: string): Promise<boolean> };
  /** Null when the organization has no such knowledge base. */
  knowledgeBases: { find(organizationId: string, knowledgeBaseId: string): Promise<unknown> };
  /** A person's account with this address, or null. */
  accounts: { findAccountByEmail(email: string): Promise<unknown> };
}

export class AgentsService {
  constructor(
    private readonly repos: Tenants<AgentsStore> & { agentEmails: AgentEmailsCrossOrg },
    private readonly access: AgentAccess,
    /** AGENT_EMAIL_DOMAINS: the domains agents' addresses may use. */
    private readonly emailDomains: readonly string[],
    private readonly neighbours: AgentNeighbours,
  ) {}

  private repo(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).agents;
  }

  async list(ctx: RequestContext, opts: AgentListOptions) {
    if (opts.all && !ctx.capabilities.has('agents.all')) {
      throw forbidden('all=true lists every agent and needs the admin or owner role');
    }
    const agentIds = opts.all ? undefined : await this.access.accessibleAgentIds(ctx);
    const { items, total } = await this.repo(ctx).list({
      q: opts.q,
      // Default order: by name, A to Z (case-insensitive).
      ...parseOrderBy<AgentOrderField>(opts.orderBy, 'name'),
      agentIds,
      limit: opts.limit,
      offset: opts.offset,
    });
    return page(items.map(toAgentView), total, opts.offset);
  }

  /**
   * An agent the caller may read: admins and owners (agents.all) read every agent, since they can list and
   * manage them all; anyone else needs access by the rule in agent-access.ts. Default agent ids create the
   * agent on first read.
   */
  async readable(ctx: RequestContext, agentId: string): Promise<AgentDoc> {
    if (!ctx.capabilities.has('agents.all')) return this.access.getAccessibleAgent(ctx, agentId);
    return this.manageable(ctx, agentId);
  }

  /** An agent for a management operation; the route already required agents.manage. */
  async manageable(ctx: RequestContext, agentId: string): Promise<AgentDoc> {
    const agent = await this.repo(ctx).findOrMaterialise(agentId);
    if (!agent) throw notFound('agent');
    return agent;
  }

  async get(ctx: RequestContext, agentId: string) {
    return toAgentView(await this.readable(ctx, agentId));
  }

  async create(ctx: RequestContext, body: AgentBody) {
    const agentId = newId('agt');
    const fields = agentFieldsFromBody(body);
    await this.checkAttachmentsKnowledgeBase(ctx, fields.emailAttachmentsToKnowledgeBaseId);
    await this.claimEmailAddress(ctx, agentId, fields.emailAddress);
    try {
      return toAgentView(await this.repo(ctx).create(agentId, { ...fields, creatorUserId: ctx.userId }));
    } catch (err) {
      await this.releaseEmailAddress(ctx, agentId, fields.emailAddress);
      throw err;
    }
  }

  /** Replaces the four required fields; optional fields left out keep their value, null or "" clears them. */
  async update(ctx: RequestContext, agentId: string, body: AgentBody) {
    const before = await this.manageable(ctx, agentId);
    const fields = agentFieldsFromBody(body);
    await this.checkAttachmentsKnowledgeBase(ctx, fields.emailAttachmentsToKnowledgeBaseId);
    // An address the agent already holds is kept as it is (a PUT accepts back what the GET returned), even
    // when it predates AGENT_EMAIL_DOMAINS; the listener takes mail only for the domains configured now.
    const kept = fields.emailAddressKey === before.emailAddressKey;
    await this.claimEmailAddress(ctx, agentId, fields.emailAddress, kept);
    const agent = await this.repo(ctx).update(agentId, fields);
    if (!agent) throw notFound('agent');
    if (before.emailAddress && before.emailAddressKey !== agent.emailAddressKey)
      await this.releaseEmailAddress(ctx, agentId, before.emailAddress);
    return toAgentView(agent);
  }

  /** Deletes the agent and everything attached to it: tools, agent attachments (both ways), group mappings. */
  async remove(ctx: RequestContext, agentId: string) {
    const agent = await this.repo(ctx).get(agentId);
    if (!agent || !(await this.repo(ctx).remove(agentId))) throw notFound('agent');
    await this.releaseEmailAddress(ctx, agentId, agent.emailAddress);
    await Promise.all([
      this.repos.tenant(ctx.organizationId).agentLinks.removeForAgent(agentId),
      ...this.neighbours.dependents.map((d) => d.removeForAgent(ctx.organizationId, agentId)),
    ]);
    return { organizationId: ctx.organizationId, agentId };
  }

  async setVisibility(ctx: RequestContext, agentId: string, visibility: AgentVisibility) {
    await this.manageable(ctx, agentId);
    if (visibility === 'public') {
      if (!(await this.neighbours.organizations.hostsPublicContent(ctx.organizationId))) {
        throw forbidden(
          'this organization is not configured to host public content, so its agents cannot be public; ' +
            'an operator enables it with `npm run cli -- org-public --org <organizationId> --enabled true`',
        );
      }
    }
    if (!(await this.repo(ctx).update(agentId, { visibility }))) throw notFound('agent');
    return { organizationId: ctx.organizationId, agentId, visibility };
  }

  /** Mail attachments go into a knowledge base of the agent's own organization. */
  private async checkAttachmentsKnowledgeBase(
    ctx: RequestContext,
    knowledgeBaseId: string | null | undefined,
  ) {
    if (!knowledgeBaseId) return;
    if (!(await this.neighbours.knowledgeBases.find(ctx.organizationId, knowledgeBaseId)))
      throw invalidReference('emailAttachmentsToKnowledgeBaseId', knowledgeBaseId);
  }

  /**
   * An inbound address routes mail to one agent, so it may belong to only one agent anywhere. The claim is
   * atomic (two agents saved at once with one address: one gets 409); agents saved before claims existed are
   * found by their address too. It must be in an agent mail domain and must not be a person's email (any
   * organization's): the reverse, an account with an agent's address, is refused in user-accounts.repository.
   */
  private async claimEmailAddress(
    ctx: RequestContext,
    agentId: string,
    address: string | null | undefined,
    kept = false,
  ) {
    if (!address) return;
    if (!kept) {
      checkAgentEmailDomain(address, this.emailDomains);
      if (await this.neighbours.accounts.findAccountByEmail(address)) throw addressOfUser(address);
    }
    const docId = agentDocId(ctx.organizationId, agentId);
    const legacy = await this.repos.agentEmails.findAgentByEmailCrossOrg(address);
    const free =
      (!legacy || legacy._id === docId) &&
      (await this.repos.agentEmails.claimAgentEmailCrossOrg(address, ctx.organizationId, docId));
    if (!free) throw conflict(`emailAddress ${address} is already used by another agent`);
  }

  private async releaseEmailAddress(
    ctx: RequestContext,
    agentId: string,
    address: string | null | undefined,
  ) {
    if (address)
      await this.repos.agentEmails.releaseAgentEmailCrossOrg(
        address,
        agentDocId(ctx.organizationId, agentId),
      );
  }

  /** An agent by id for another feature's internal use (no access check; null when there is none). */
  async find(organizationId: string, agentId: string): Promise<AgentDoc | null> {
    return this.repos.tenant(organizationId).agents.get(agentId);
  }

  /** The organization's agents among `agentIds`, with no access check: for what names agents that were checked
   * when they were attached (chain steps, trigger handlers). */
  getMany(organizationId: string, agentIds: string[]): Promise<AgentDoc[]> {
    return this.repos.tenant(organizationId).agents.getMany(agentIds);
  }

  /** An agent by id with no access check, created on first use when its id is a default agent's (group
   * mappings, which admins make). */
  findOrMaterialise(organizationId: string, agentId: string): Promise<AgentDoc | null> {
    return this.repos.tenant(organizationId).agents.findOrMaterialise(agentId);
  }
}
