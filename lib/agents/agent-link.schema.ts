import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** Agent `agentId` may call agent `targetAgentId`; `instructions` tell it when and how. `_id` is
 * `<organizationId>:<agentId>:<targetAgentId>`: one link per pair. */
export const agentLinkSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    agentId: { type: String, required: true },
    targetAgentId: { type: String, required: true },
    instructions: { type: String, default: '' },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the attachment list of an agent, cycle checks, and removal with the calling agent.
agentLinkSchema.index({ organizationId: 1, agentId: 1, createdAt: 1 });
// Serves: removing the links that point at a deleted agent.
agentLinkSchema.index({ organizationId: 1, targetAgentId: 1 });

export type AgentLinkDoc = DocOf<typeof agentLinkSchema>;
export const agentLinkModel = defineModel('AgentLink', 'agent_links', agentLinkSchema);
