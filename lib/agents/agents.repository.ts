import { findOrCreate } from '@lib/db/duplicate-key';
import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import { pickView } from '@lib/db/view';
import { containsPattern, type PageRequest } from '@lib/paging';
import { AGENT_EMAIL_FIELDS, agentDocId, agentModel, type AgentDoc } from './agent.schema';
import { DEFAULT_AGENT_MODEL, defaultAgent } from './default-agents';

export function toAgentView(a: AgentDoc) {
  return {
    id: a.agentId,
    ...pickView(a, [
      'organizationId',
      'name',
      'description',
      'instructions',
      'model',
      'creativityScore',
      'reasoning',
      ...AGENT_EMAIL_FIELDS,
      'visibility',
      'createdAt',
      'updatedAt',
    ]),
  };
}
export type AgentView = ReturnType<typeof toAgentView>;

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

/** Agents of one organization; every query is scoped to it. Agents are addressed by their wire id. */
export class AgentsRepository extends TenantRepository {
  private readonly model = this.db.model(agentModel);

  private id(agentId: string) {
    return agentDocId(this.organizationId, agentId);
  }

  async list(query: AgentListQuery) {
    const filter = this.scope<AgentDoc>();
    if (query.q) filter.name = containsPattern(query.q);
    if (query.agentIds) filter.agentId = { $in: query.agentIds };
    const dir = query.descending ? -1 : 1;
    return findPage(this.model, filter, { [AGENT_ORDER_FIELDS[query.orderBy]]: dir, agentId: dir }, query);
  }

  get(agentId: string) {
    return this.findOwned(this.model, this.id(agentId));
  }

  getMany(agentIds: string[]) {
    return this.model.find(this.scope<AgentDoc>({ agentId: { $in: agentIds } })).lean<AgentDoc[]>();
  }

  /** The agent, creating a default agent (default-agents.ts) on first use of its id. */
  async findOrMaterialise(agentId: string): Promise<AgentDoc | null> {
    const preset = defaultAgent(agentId);
    if (!preset) return this.get(agentId);
    // The deterministic _id makes a concurrent creation of the same default agent collide.
    const { doc } = await findOrCreate(
      () => this.get(agentId),
      () =>
        this.create(agentId, {
          name: preset.name,
          nameSort: preset.name.toLowerCase(),
          description: preset.description,
          instructions: preset.instructions,
          model: DEFAULT_AGENT_MODEL,
          creativityScore: preset.creativityScore,
          reasoning: preset.reasoning,
          creatorUserId: null,
        }),
    );
    return doc;
  }

  async create(agentId: string, fields: AgentFields): Promise<AgentDoc> {
    const doc = await this.model.create({
      ...fields,
      _id: this.id(agentId),
      organizationId: this.organizationId,
      agentId,
    });
    return doc.toObject();
  }

  update(agentId: string, set: AgentFields) {
    return this.updateOwned(this.model, this.id(agentId), { $set: set });
  }

  remove(agentId: string): Promise<boolean> {
    return this.deleteOwned(this.model, this.id(agentId));
  }
}
