import type { AgentsService } from '@lib/agents/agents.service';
import type { RequestContext } from '@lib/auth/context';
import { invalidReference, notFound, referenced } from '@lib/errors';
import type { KbAccess } from '@lib/knowledge-bases/kb-access';
import type { Tenants } from '@lib/db/tenants';
import { validateToolConfiguration } from '@lib/tools/registry';
import { keepStoredSecrets } from '@lib/tools/secrets';
import type { ChainsService } from './chains.service';
import type { StepAttachmentKind } from './step-attachment.schema';
import { toAgentChainView, toStepAttachmentView } from './views';
import type { ChainsStore } from './store';

type Config = Record<string, unknown>;

/**
 * What chain steps use (agents, knowledge bases, tools) and which chains agents run as tools. Step
 * attachments change with the chain (chains.manage); agent attachments with the agent (agents.manage).
 */
export class ChainAttachmentsService {
  constructor(
    private readonly repos: Tenants<ChainsStore>,
    private readonly chains: ChainsService,
    private readonly agents: AgentsService,
    private readonly kbAccess: KbAccess,
  ) {}

  private repo(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).chainAttachments;
  }

  async listForStep(ctx: RequestContext, chainId: string, stepId: string, kind: StepAttachmentKind) {
    await this.chains.step(ctx, chainId, stepId);
    return (await this.repo(ctx).listForStep(stepId, kind)).map(toStepAttachmentView);
  }

  async getForStep(
    ctx: RequestContext,
    chainId: string,
    stepId: string,
    kind: StepAttachmentKind,
    id: string,
  ) {
    await this.chains.step(ctx, chainId, stepId);
    const attachment = await this.repo(ctx).getForStep(stepId, kind, id);
    if (!attachment) throw notFound(`${kind} attachment`);
    return toStepAttachmentView(attachment);
  }

  /** Attaches an agent or knowledge base of the organization, or a registry tool with its configuration. */
  async attachToStep(
    ctx: RequestContext,
    chainId: string,
    stepId: string,
    kind: StepAttachmentKind,
    targetId: string,
    config?: Config,
  ) {
    await this.chains.step(ctx, chainId, stepId);
    if (kind === 'agent') await referenced('agentId', targetId, this.agents.readable(ctx, targetId));
    if (kind === 'knowledge-base')
      await referenced('knowledgeBaseId', targetId, this.kbAccess.readable(ctx, targetId));
    if (kind === 'tool') {
      validateToolConfiguration(targetId, config ?? {});
      keepStoredSecrets(targetId, config ?? {}, {});
    }
    const attachment = await this.repo(ctx).attachToStep({
      actionChainId: chainId,
      stepId,
      kind,
      targetId,
      configJson: kind === 'tool' ? JSON.stringify(config ?? {}) : null,
      creatorUserId: ctx.userId,
    });
    return toStepAttachmentView(attachment);
  }

  /** A tool's new configuration; masked secrets keep their stored values. */
  async updateStepTool(
    ctx: RequestContext,
    chainId: string,
    stepId: string,
    toolCode: string,
    config: Config,
  ) {
    await this.chains.step(ctx, chainId, stepId);
    // A tool the step does not have (named in the path) is 404 before its configuration is looked at.
    const current = await this.repo(ctx).getForStep(stepId, 'tool', toolCode);
    if (!current) throw notFound('tool attachment');
    validateToolConfiguration(toolCode, config);
    const stored = JSON.parse(current.configJson ?? '{}') as Config;
    const merged = keepStoredSecrets(toolCode, config, stored);
    const updated = await this.repo(ctx).updateStepConfig(stepId, 'tool', toolCode, JSON.stringify(merged));
    if (!updated) throw notFound('tool attachment');
    return toStepAttachmentView(updated);
  }

  async detachFromStep(
    ctx: RequestContext,
    chainId: string,
    stepId: string,
    kind: StepAttachmentKind,
    id: string,
  ) {
    await this.chains.step(ctx, chainId, stepId);
    if (!(await this.repo(ctx).detachFromStep(stepId, kind, id))) throw notFound(`${kind} attachment`);
    return { actionChainId: chainId, stepId, kind, id, deleted: true };
  }

  async listForAgent(ctx: RequestContext, agentId: string) {
    await this.agents.readable(ctx, agentId);
    const attachments = await this.repo(ctx).listForAgent(agentId);
    const chains = await this.repos
      .tenant(ctx.organizationId)
      .chains.getMany(attachments.map((a) => a.actionChainId));
    const names = new Map(chains.map((c) => [c._id, c.name]));
    return {
      organizationId: ctx.organizationId,
      agentId,
      actionChains: attachments.map((a) => toAgentChainView(a, names.get(a.actionChainId) ?? null)),
    };
  }

  async attachToAgent(ctx: RequestContext, agentId: string, actionChainId: string) {
    await this.agents.manageable(ctx, agentId);
    const chain = await this.repos.tenant(ctx.organizationId).chains.get(actionChainId);
    if (!chain) throw invalidReference('actionChainId', actionChainId);
    const attachment = await this.repo(ctx).attachToAgent(agentId, actionChainId, ctx.userId);
    return toAgentChainView(attachment, chain.name);
  }

  async detachFromAgent(ctx: RequestContext, agentId: string, actionChainId: string) {
    await this.agents.manageable(ctx, agentId);
    if (!(await this.repo(ctx).detachFromAgent(agentId, actionChainId))) throw notFound('chain attachment');
    return { organizationId: ctx.organizationId, agentId, actionChainId, deleted: true };
  }

  /** Detaches a deleted knowledge base, agent or tool from every step that used it. */
  async removeTarget(organizationId: string, kind: StepAttachmentKind, targetId: string): Promise<void> {
    await this.repos.tenant(organizationId).chainAttachments.removeTarget(kind, targetId);
  }

  /** The chains attached to an agent, with no access check (its model tools). */
  async chainIdsOfAgent(organizationId: string, agentId: string): Promise<string[]> {
    return (await this.repos.tenant(organizationId).chainAttachments.listForAgent(agentId)).map(
      (l) => l.actionChainId,
    );
  }

  /** An agent's chain attachments go with it (lib/agents/agents.service.ts). */
  async removeForAgent(organizationId: string, agentId: string): Promise<void> {
    await this.repos.tenant(organizationId).chainAttachments.removeForAgent(agentId);
  }
}
