import { conflictOnDuplicate } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import {
  agentChainModel,
  stepAttachmentModel,
  type AgentChainDoc,
  type StepAttachmentDoc,
  type StepAttachmentKind,
} from './step-attachment.schema';

const stepAttachmentId = (stepId: string, kind: StepAttachmentKind, targetId: string) =>
  `${stepId}:${kind}:${targetId}`;

/** What chain steps have attached, and which chains agents may run, in one organization. */
export class ChainAttachmentsRepository extends TenantRepository {
  private readonly steps = this.db.model(stepAttachmentModel);
  private readonly agents = this.db.model(agentChainModel);

  listForStep(stepId: string, kind?: StepAttachmentKind) {
    return this.steps
      .find(this.scope<StepAttachmentDoc>({ stepId, ...(kind ? { kind } : {}) }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<StepAttachmentDoc[]>();
  }

  /** The attachments of every step of a chain (what a run's steps give the model). */
  listForChain(actionChainId: string) {
    return this.steps
      .find(this.scope<StepAttachmentDoc>({ actionChainId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<StepAttachmentDoc[]>();
  }

  async getForStep(stepId: string, kind: StepAttachmentKind, targetId: string) {
    const doc = await this.findOwned(this.steps, stepAttachmentId(stepId, kind, targetId));
    return doc;
  }

  /** Throws ConflictError when the target is already attached to the step. */
  attachToStep(fields: Omit<StepAttachmentDoc, '_id' | 'organizationId' | 'createdAt' | 'updatedAt'>) {
    const _id = stepAttachmentId(fields.stepId, fields.kind, fields.targetId);
    return conflictOnDuplicate(
      async () =>
        (await this.steps.create({ ...fields, _id, organizationId: this.organizationId })).toObject(),
      `this ${fields.kind} is already attached to the step`,
    );
  }

  updateStepConfig(stepId: string, kind: StepAttachmentKind, targetId: string, configJson: string) {
    return this.updateOwned(this.steps, stepAttachmentId(stepId, kind, targetId), { $set: { configJson } });
  }

  detachFromStep(stepId: string, kind: StepAttachmentKind, targetId: string) {
    return this.deleteOwned(this.steps, stepAttachmentId(stepId, kind, targetId));
  }

  async removeForStep(stepId: string) {
    await this.steps.deleteMany(this.scope<StepAttachmentDoc>({ stepId }));
  }

  /** When an agent or knowledge base is deleted, no step keeps it. */
  async removeTarget(kind: StepAttachmentKind, targetId: string) {
    await this.steps.deleteMany(this.scope<StepAttachmentDoc>({ kind, targetId }));
  }

  listForAgent(agentId: string) {
    return this.agents
      .find(this.scope<AgentChainDoc>({ agentId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<AgentChainDoc[]>();
  }

  /** Throws ConflictError when the chain is already attached to the agent. */
  attachToAgent(agentId: string, actionChainId: string, creatorUserId: string) {
    return conflictOnDuplicate(
      async () =>
        (
          await this.agents.create({
            _id: `${agentId}:${actionChainId}`,
            organizationId: this.organizationId,
            agentId,
            actionChainId,
            creatorUserId,
          })
        ).toObject(),
      'this chain is already attached to the agent',
    );
  }

  detachFromAgent(agentId: string, actionChainId: string) {
    return this.deleteOwned(this.agents, `${agentId}:${actionChainId}`);
  }

  /** Agent.dependents: an agent's chain attachments go with it. */
  async removeForAgent(agentId: string) {
    await this.agents.deleteMany(this.scope<AgentChainDoc>({ agentId }));
    await this.removeTarget('agent', agentId);
  }

  /** A deleted chain's step attachments and agent attachments. */
  async removeForChain(actionChainId: string) {
    await Promise.all([
      this.steps.deleteMany(this.scope<StepAttachmentDoc>({ actionChainId })),
      this.agents.deleteMany(this.scope<AgentChainDoc>({ actionChainId })),
    ]);
  }
}
