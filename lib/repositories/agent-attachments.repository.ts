import type { AgentLinkDoc, AgentToolAttachmentDoc } from '@lib/db/agent-attachment.schema';
import { TenantRepository } from './tenant-repository';

export interface AgentToolAttachmentView {
  organizationId: string;
  agentId: string;
  toolCode: string;
  configuration: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export function toToolAttachmentView(t: AgentToolAttachmentDoc): AgentToolAttachmentView {
  return {
    organizationId: t.organizationId,
    agentId: t.agentId,
    toolCode: t.toolCode,
    configuration: JSON.parse(t.configurationJson) as Record<string, unknown>,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

/** Tool attachments of the agents of one organization; every query is scoped to it. */
export class AgentToolsRepository extends TenantRepository<AgentToolAttachmentDoc> {
  list(agentId: string) {
    return this.models.AgentToolAttachment.find(this.scope({ agentId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean();
  }

  /** Throws the driver's duplicate-key error (code 11000) when the tool is already attached. */
  async create(agentId: string, toolCode: string, configuration: unknown): Promise<AgentToolAttachmentDoc> {
    const doc = await this.models.AgentToolAttachment.create({
      _id: `${this.organizationId}:${agentId}:${toolCode}`,
      organizationId: this.organizationId,
      agentId,
      toolCode,
      configurationJson: JSON.stringify(configuration),
    });
    return doc.toObject();
  }

  update(agentId: string, toolCode: string, configuration: unknown) {
    return this.models.AgentToolAttachment.findOneAndUpdate(
      this.scope({ agentId, toolCode }),
      { $set: { configurationJson: JSON.stringify(configuration) } },
      { new: true },
    ).lean();
  }

  async remove(agentId: string, toolCode: string): Promise<boolean> {
    const res = await this.models.AgentToolAttachment.deleteOne(this.scope({ agentId, toolCode }));
    return res.deletedCount === 1;
  }

  async removeForAgent(agentId: string) {
    await this.models.AgentToolAttachment.deleteMany(this.scope({ agentId }));
  }
}

export interface AgentLinkView {
  organizationId: string;
  agentId: string;
  targetAgentId: string;
  targetAgentName: string;
  instructions: string;
  createdAt: string;
  updatedAt: string;
}

export function toLinkView(l: AgentLinkDoc, targetAgentName: string): AgentLinkView {
  return {
    organizationId: l.organizationId,
    agentId: l.agentId,
    targetAgentId: l.targetAgentId,
    targetAgentName,
    instructions: l.instructions,
    createdAt: l.createdAt.toISOString(),
    updatedAt: l.updatedAt.toISOString(),
  };
}

/** Agent-to-agent attachments (an agent may call another) of one organization. */
export class AgentLinksRepository extends TenantRepository<AgentLinkDoc> {
  list(agentId: string) {
    return this.models.AgentLink.find(this.scope({ agentId })).sort({ createdAt: 1, _id: 1 }).lean();
  }

  /** The agents any of `agentIds` may call: one step of a walk over the attachment graph. */
  async targetsOf(agentIds: string[]): Promise<string[]> {
    const links = await this.models.AgentLink.find(this.scope({ agentId: { $in: agentIds } })).lean();
    return links.map((l) => l.targetAgentId);
  }

  /** Throws the driver's duplicate-key error (code 11000) when the pair is already attached. */
  async create(agentId: string, targetAgentId: string, instructions: string): Promise<AgentLinkDoc> {
    const doc = await this.models.AgentLink.create({
      _id: `${this.organizationId}:${agentId}:${targetAgentId}`,
      organizationId: this.organizationId,
      agentId,
      targetAgentId,
      instructions,
    });
    return doc.toObject();
  }

  update(agentId: string, targetAgentId: string, instructions: string) {
    return this.models.AgentLink.findOneAndUpdate(
      this.scope({ agentId, targetAgentId }),
      { $set: { instructions } },
      { new: true },
    ).lean();
  }

  async remove(agentId: string, targetAgentId: string): Promise<boolean> {
    const res = await this.models.AgentLink.deleteOne(this.scope({ agentId, targetAgentId }));
    return res.deletedCount === 1;
  }

  /** Removes the links from and to a deleted agent. */
  async removeForAgent(agentId: string) {
    await this.models.AgentLink.deleteMany(this.scope({ $or: [{ agentId }, { targetAgentId: agentId }] }));
  }
}
