import { conflictOnDuplicate } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import { toolAttachmentModel, type ToolAttachmentDoc } from './tool-attachment.schema';

/** Tool attachments of the agents of one organization; every query is scoped to it. */
export class ToolAttachmentsRepository extends TenantRepository {
  private readonly model = this.db.model(toolAttachmentModel);

  private id(agentId: string, toolCode: string) {
    return `${this.organizationId}:${agentId}:${toolCode}`;
  }

  list(agentId: string) {
    return this.model
      .find(this.scope<ToolAttachmentDoc>({ agentId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<ToolAttachmentDoc[]>();
  }

  get(agentId: string, toolCode: string) {
    return this.findOwned(this.model, this.id(agentId, toolCode));
  }

  /** Throws ConflictError when the tool is already attached. */
  create(agentId: string, toolCode: string, configuration: unknown): Promise<ToolAttachmentDoc> {
    return conflictOnDuplicate(
      async () =>
        (
          await this.model.create({
            _id: this.id(agentId, toolCode),
            organizationId: this.organizationId,
            agentId,
            toolCode,
            configurationJson: JSON.stringify(configuration),
          })
        ).toObject(),
      `${toolCode} is already attached to this agent; PUT …/tools/${toolCode} changes it`,
    );
  }

  update(agentId: string, toolCode: string, configuration: unknown) {
    return this.updateOwned(this.model, this.id(agentId, toolCode), {
      $set: { configurationJson: JSON.stringify(configuration) },
    });
  }

  remove(agentId: string, toolCode: string): Promise<boolean> {
    return this.deleteOwned(this.model, this.id(agentId, toolCode));
  }

  async removeForAgent(agentId: string) {
    await this.model.deleteMany(this.scope<ToolAttachmentDoc>({ agentId }));
  }
}
