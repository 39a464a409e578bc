import type { Models } from '@lib/db/models';
import { findOwned } from '@lib/repositories/owned';
import type { ToolDefinition } from '@workflows/messages';
import { serverToolDefinition } from './tools';

const askParameters = {
  type: 'object',
  properties: { message: { type: 'string', description: 'What to ask or tell the agent' } },
  required: ['message'],
};

/**
 * The tools a model sees for an agent: its attached catalogue tools and, when `call_agent` is attached, one
 * `ask_<agentId>` per agent attached to it.
 */
export async function loadAgentTools(
  models: Models,
  organizationId: string,
  agentId: string,
): Promise<ToolDefinition[]> {
  const attachments = await models.AgentToolAttachment.find({ organizationId, agentId })
    .sort({ createdAt: 1 })
    .lean();
  const links = attachments.some((a) => a.toolCode === 'call_agent')
    ? await models.AgentLink.find({ organizationId, agentId }).sort({ createdAt: 1 }).lean()
    : [];
  const targets = links.length
    ? await models.Agent.find({ organizationId, agentId: { $in: links.map((l) => l.targetAgentId) } }).lean()
    : [];
  const byId = new Map(targets.map((a) => [a.agentId, a]));
  const server = attachments
    .map((a) => serverToolDefinition(a.toolCode))
    .filter((t): t is ToolDefinition => t !== null);
  const agents = links.flatMap((link): ToolDefinition[] => {
    const target = byId.get(link.targetAgentId);
    if (!target) return [];
    return [
      {
        name: `ask_${target.agentId}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64),
        description: `Ask the agent "${target.name}" (${target.description}). ${link.instructions}`.trim(),
        parameters: askParameters,
        executor: 'agent',
        targetAgentId: target.agentId,
      },
    ];
  });
  return [...server, ...agents];
}

export async function loadToolConfig(
  models: Models,
  organizationId: string,
  agentId: string,
  toolCode: string,
) {
  const attachment = await findOwned(
    models.AgentToolAttachment,
    `${organizationId}:${agentId}:${toolCode}`,
    organizationId,
  );
  return attachment ? (JSON.parse(attachment.configurationJson) as Record<string, unknown>) : null;
}
