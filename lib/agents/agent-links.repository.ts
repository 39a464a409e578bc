import { conflictOnDuplicate } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import { pickView } from '@lib/db/view';
import { agentLinkModel, type AgentLinkDoc } from './agent-link.schema';

export function toLinkView(l: AgentLinkDoc, targetAgentName: string) {
  return {
    ...pickView(l, ['organizationId', 'agentId', 'targetAgentId']),
    targetAgentName,
    ...pickView(l, ['instructions', 'createdAt', 'updatedAt']),
  };
}

/** Agent-to-agent attachments (an agent may call another) of one organization. */
export class AgentLinksRepository extends TenantRepository {
  private readonly model = this.db.model(agentLinkModel);

  private id(agentId: string, targetAgentId: string) {
    return `${this.organizationId}:${agentId}:${targetAgentId}`;
  }

  list(agentId: string) {
    return this.model
      .find(this.scope<AgentLinkDoc>({ agentId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<AgentLinkDoc[]>();
  }

  /** The agents any of `agentIds` may call: one step of a walk over the attachment graph. */
  async targetsOf(agentIds: string[]): Promise<string[]> {
    const links = await this.model
      .find(this.scope<AgentLinkDoc>({ agentId: { $in: agentIds } }), { targetAgentId: 1 })
      .lean<Array<{ targetAgentId: string }>>();
    return links.map((l) => l.targetAgentId);
  }

  /** Throws ConflictError when the pair is already attached. */
  create(agentId: string, targetAgentId: string, instructions: string): Promise<AgentLinkDoc> {
    return conflictOnDuplicate(
      async () =>
        (
          await this.model.create({
            _id: this.id(agentId, targetAgentId),
            organizationId: this.organizationId,
            agentId,
            targetAgentId,
            instructions,
          })
        ).toObject(),
      `${targetAgentId} is already attached to this agent; PUT changes its instructions`,
    );
  }

  update(agentId: string, targetAgentId: string, instructions: string) {
    return this.updateOwned(this.model, this.id(agentId, targetAgentId), { $set: { instructions } });
  }

  remove(agentId: string, targetAgentId: string): Promise<boolean> {
    return this.deleteOwned(this.model, this.id(agentId, targetAgentId));
  }

  /** Removes the links from and to a deleted agent. */
  async removeForAgent(agentId: string) {
    await this.model.deleteMany(this.scope<AgentLinkDoc>({ $or: [{ agentId }, { targetAgentId: agentId }] }));
  }
}
