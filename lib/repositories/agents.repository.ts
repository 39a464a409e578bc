import { DEFAULT_AGENT_MODEL, defaultAgent } from '@lib/agents/default-agents';
import { agentDocId, type AgentDoc, type AgentEmailFields, type AgentVisibility } from '@lib/db/agent.schema';
import type { Models } from '@lib/db/models';
import { containsPattern, type PageRequest } from '@lib/paging';
import { findPage } from './find-page';
import { deleteOwned, findOwned, updateOwned } from './owned';
import { TenantRepository } from './tenant-repository';

export interface AgentView extends AgentEmailFields {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  instructions: string;
  model: string;
  creativityScore: string;
  reasoning: AgentDoc['reasoning'];
  visibility: AgentVisibility;
  createdAt: string;
  updatedAt: string;
}

export function toAgentView(a: AgentDoc): AgentView {
  return {
    id: a.agentId,
    organizationId: a.organizationId,
    name: a.name,
    description: a.description,
    instructions: a.instructions,
    model: a.model,
    creativityScore: a.creativityScore,
    reasoning: a.reasoning,
    emailAddress: a.emailAddress ?? null,
    emailFilters: a.emailFilters ?? null,
    emailAttachmentsToKnowledgeBaseId: a.emailAttachmentsToKnowledgeBaseId ?? null,
    emailAttachmentsFileTypeFilter: a.emailAttachmentsFileTypeFilter ?? null,
    emailCcTo: a.emailCcTo ?? null,
    emailBccTo: a.emailBccTo ?? null,
    emailReplyTo: a.emailReplyTo ?? null,
    visibility: a.visibility,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

/** `orderBy` names on the wire → stored fields. */
export const AGENT_ORDER_FIELDS = {
  name: 'nameSort',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
} as const;
export type AgentOrderField = keyof typeof AGENT_ORDER_FIELDS;

export interface AgentListQuery extends PageRequest {
  q?: string;
  orderBy: AgentOrderField;
  descending: boolean;
  /** Only these agents (the caller's accessible ones); undefined: every agent. */
  agentIds?: string[];
}

export type AgentFields = Partial<
  Omit<AgentDoc, '_id' | 'organizationId' | 'agentId' | 'createdAt' | 'updatedAt'>
>;

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;

/** Agents of one organization; every query is scoped to it. Agents are addressed by their wire id. */
export class AgentsRepository extends TenantRepository<AgentDoc> {
  async list(query: AgentListQuery) {
    const filter = this.scope();
    if (query.q) filter.name = containsPattern(query.q);
    if (query.agentIds) filter.agentId = { $in: query.agentIds };
    const dir = query.descending ? -1 : 1;
    return findPage(
      this.models.Agent,
      filter,
      { [AGENT_ORDER_FIELDS[query.orderBy]]: dir, agentId: dir },
      query,
    );
  }

  get(agentId: string) {
    return findOwned(this.models.Agent, agentDocId(this.organizationId, agentId), this.organizationId);
  }

  getMany(agentIds: string[]) {
    return this.models.Agent.find(this.scope({ agentId: { $in: agentIds } })).lean();
  }

  /** The agent, creating a default agent (lib/agents/default-agents.ts) on first use of its id. */
  async findOrMaterialise(agentId: string): Promise<AgentDoc | null> {
    const found = await this.get(agentId);
    if (found) return found;
    const preset = defaultAgent(agentId);
    if (!preset) return null;
    try {
      return await this.create(agentId, {
        name: preset.name,
        nameSort: preset.name.toLowerCase(),
        description: preset.description,
        instructions: preset.instructions,
        model: DEFAULT_AGENT_MODEL,
        creativityScore: preset.creativityScore,
        reasoning: preset.reasoning,
        creatorUserId: null,
      });
    } catch (err) {
      // A concurrent request created it first: the deterministic _id made ours the duplicate.
      if (isDuplicateKey(err)) return this.get(agentId);
      throw err;
    }
  }

  async create(agentId: string, fields: AgentFields): Promise<AgentDoc> {
    const doc = await this.models.Agent.create({
      ...fields,
      _id: agentDocId(this.organizationId, agentId),
      organizationId: this.organizationId,
      agentId,
    });
    return doc.toObject();
  }

  update(agentId: string, set: AgentFields) {
    return updateOwned(this.models.Agent, agentDocId(this.organizationId, agentId), this.organizationId, {
      $set: set,
    });
  }

  remove(agentId: string): Promise<boolean> {
    return deleteOwned(this.models.Agent, agentDocId(this.organizationId, agentId), this.organizationId);
  }
}

/** The agent that owns an inbound address, in any organization: addresses route mail, so they are global. */
export function findAgentByEmailCrossOrg(models: Models, emailAddress: string) {
  return models.Agent.findOne({ emailAddressKey: emailAddress.toLowerCase() }).lean();
}
