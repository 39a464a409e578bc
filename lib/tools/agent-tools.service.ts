import type { AgentsService } from '@lib/agents/agents.service';
import type { RequestContext } from '@lib/auth/context';
import { badRequest, notFound } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import { toolCatalogue, validateToolConfiguration } from './registry';
import { keepStoredSecrets } from './secrets';
import type { ToolsStore } from './store';
import { toToolAttachmentView } from './tool-attachment.view';

/** Registry tools attached to an agent. Reads need read access to the agent; writes agents.manage. */
export class AgentToolsService {
  constructor(
    private readonly repos: Tenants<ToolsStore>,
    private readonly agents: AgentsService,
  ) {}

  private tools(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).toolAttachments;
  }

  listTools() {
    return toolCatalogue();
  }

  async listAgentTools(ctx: RequestContext, agentId: string) {
    await this.agents.readable(ctx, agentId);
    return (await this.tools(ctx).list(agentId)).map(toToolAttachmentView);
  }

  async attachAgentTool(ctx: RequestContext, agentId: string, toolCode: string, configuration: unknown = {}) {
    await this.agents.manageable(ctx, agentId);
    validateToolConfiguration(toolCode, configuration);
    // A new attachment has no stored secret a mask could stand for.
    keepStoredSecrets(toolCode, configuration as Record<string, unknown>, {});
    return toToolAttachmentView(await this.tools(ctx).create(agentId, toolCode, configuration));
  }

  async updateAgentTool(
    ctx: RequestContext,
    agentId: string,
    toolCode: string,
    body: { toolCode?: string; configuration: unknown },
  ) {
    // What the path names first: a tool the agent does not have is 404, whatever the body holds.
    await this.agents.manageable(ctx, agentId);
    const current = await this.tools(ctx).get(agentId, toolCode);
    if (!current) throw notFound('tool attachment');
    if (body.toolCode !== undefined && body.toolCode !== toolCode) {
      throw badRequest(`toolCode in the body (${body.toolCode}) differs from the path (${toolCode})`);
    }
    validateToolConfiguration(toolCode, body.configuration);
    const configuration = keepStoredSecrets(
      toolCode,
      body.configuration as Record<string, unknown>,
      JSON.parse(current.configurationJson) as Record<string, unknown>,
    );
    const updated = await this.tools(ctx).update(agentId, toolCode, configuration);
    if (!updated) throw notFound('tool attachment');
    return toToolAttachmentView(updated);
  }

  async detachAgentTool(ctx: RequestContext, agentId: string, toolCode: string) {
    await this.agents.manageable(ctx, agentId);
    if (!(await this.tools(ctx).remove(agentId, toolCode))) throw notFound('tool attachment');
    return { organizationId: ctx.organizationId, agentId, toolCode };
  }

  /** An agent's tools go with it (lib/agents/agents.service.ts). */
  async removeForAgent(organizationId: string, agentId: string): Promise<void> {
    await this.repos.tenant(organizationId).toolAttachments.removeForAgent(agentId);
  }
}
