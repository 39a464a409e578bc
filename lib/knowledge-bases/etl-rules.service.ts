import type { AgentAccess } from '@lib/agents/agent-access';
import type { RequestContext } from '@lib/auth/context';
import { badRequest, notFound, referenced } from '@lib/errors';
import { newId } from '@lib/ids';
import type { Tenants } from '@lib/db/tenants';
import { checkConditions } from './etl-conditions';
import type { EtlCondition } from './etl-rule.schema';
import type { EtlRuleFields } from './etl-rules.repository';
import type { KbAccess } from './kb-access';
import type { KnowledgeBasesStore } from './store';
import { toEtlRuleView } from './views';

export interface EtlRuleBody {
  etlType: 'agent' | 'workflow' | 'action-chain';
  agentId?: string | null;
  prompt?: string | null;
  workflowId?: string | null;
  conditions: EtlCondition[];
}

/** The action chain a workflow rule names (not-found when there is none): the chains feature, reached
 * through this port (wired in lib/services.ts) since chains attach knowledge bases and so sit above them. */
export interface ChainLookup {
  chain(ctx: { organizationId: string }, actionChainId: string): Promise<{ inputType: string }>;
}

/** ETL rules: reads need read access to the knowledge base, writes the right to change it. */
export class EtlRulesService {
  constructor(
    private readonly repos: Tenants<KnowledgeBasesStore>,
    private readonly access: KbAccess,
    private readonly agents: AgentAccess,
    private readonly chains: ChainLookup,
  ) {}

  private rules(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).etlRules;
  }

  /** The stored fields of a valid rule; 400 naming what is wrong otherwise. */
  private async validate(ctx: RequestContext, body: EtlRuleBody): Promise<EtlRuleFields> {
    if (body.etlType === 'action-chain')
      throw badRequest(
        "etlType 'action-chain' is deprecated; use 'workflow' with the chain's id as workflowId",
      );
    checkConditions(body.conditions);
    const conditions = body.conditions.map(({ field, comparison, value, mergeOperator }) => ({
      field,
      comparison,
      ...(value !== undefined ? { value } : {}),
      ...(mergeOperator ? { mergeOperator } : {}),
    })) as EtlCondition[];
    if (body.etlType === 'agent') {
      if (!body.agentId || !body.prompt) throw badRequest("an 'agent' rule needs agentId and prompt");
      if (body.workflowId) throw badRequest("an 'agent' rule takes no workflowId");
      // The rule runs with its creator's rights: they must be able to use the agent now.
      await referenced('agentId', body.agentId, this.agents.getAccessibleAgent(ctx, body.agentId));
      return { etlType: 'agent', agentId: body.agentId, prompt: body.prompt, workflowId: null, conditions };
    }
    if (!body.workflowId) throw badRequest("a 'workflow' rule needs workflowId");
    if (body.agentId) throw badRequest("a 'workflow' rule takes no agentId");
    // A workflow is an action chain; it runs on the file, so it must be a file chain.
    const chain = await referenced('workflowId', body.workflowId, this.chains.chain(ctx, body.workflowId));
    if (chain.inputType !== 'file')
      throw badRequest(`the action chain ${body.workflowId} must have inputType 'file' to run on files`);
    return {
      etlType: 'workflow',
      agentId: null,
      prompt: body.prompt ?? null,
      workflowId: body.workflowId,
      conditions,
    };
  }

  async list(ctx: RequestContext, knowledgeBaseId: string) {
    await this.access.readable(ctx, knowledgeBaseId);
    return (await this.rules(ctx).list(knowledgeBaseId)).map(toEtlRuleView);
  }

  async get(ctx: RequestContext, knowledgeBaseId: string, etlId: string) {
    await this.access.readable(ctx, knowledgeBaseId);
    const rule = await this.rules(ctx).get(knowledgeBaseId, etlId);
    if (!rule) throw notFound('ETL rule');
    return toEtlRuleView(rule);
  }

  async create(ctx: RequestContext, knowledgeBaseId: string, body: EtlRuleBody) {
    await this.access.writable(ctx, knowledgeBaseId);
    const fields = await this.validate(ctx, body);
    return toEtlRuleView(await this.rules(ctx).create(newId('etl'), knowledgeBaseId, ctx.userId, fields));
  }

  async update(ctx: RequestContext, knowledgeBaseId: string, etlId: string, body: EtlRuleBody) {
    await this.access.writable(ctx, knowledgeBaseId);
    const fields = await this.validate(ctx, body);
    const rule = await this.rules(ctx).replace(knowledgeBaseId, etlId, fields);
    if (!rule) throw notFound('ETL rule');
    return toEtlRuleView(rule);
  }

  async remove(ctx: RequestContext, knowledgeBaseId: string, etlId: string) {
    await this.access.writable(ctx, knowledgeBaseId);
    if (!(await this.rules(ctx).remove(knowledgeBaseId, etlId))) throw notFound('ETL rule');
    return { etlId, knowledgeBaseId };
  }
}
