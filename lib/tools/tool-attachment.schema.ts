import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** A registry tool attached to an agent, with its configuration (valid against the tool's schema). `_id` is
 * `<organizationId>:<agentId>:<toolCode>`: one attachment per tool, even under concurrent attaches. */
export const toolAttachmentSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    agentId: { type: String, required: true },
    toolCode: { type: String, required: true },
    /** The configuration as JSON text: header names and other user keys never reach the store as fields. */
    configurationJson: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the tool list of an agent and removing them all when the agent is deleted.
toolAttachmentSchema.index({ organizationId: 1, agentId: 1, createdAt: 1 });

export type ToolAttachmentDoc = DocOf<typeof toolAttachmentSchema>;
export const toolAttachmentModel = defineModel('AgentToolAttachment', 'agent_tools', toolAttachmentSchema);
