import { Schema } from 'mongoose';

/** A catalogue tool attached to an agent, with its configuration (valid against the tool's schema). */
export interface AgentToolAttachmentDoc {
  /** `<organizationId>:<agentId>:<toolCode>`: one attachment per tool, even under concurrent attaches. */
  _id: string;
  organizationId: string;
  agentId: string;
  toolCode: string;
  /** The configuration as JSON text: header names and other user keys never reach the store as fields. */
  configurationJson: string;
  createdAt: Date;
  updatedAt: Date;
}

export const agentToolAttachmentSchema = new Schema<AgentToolAttachmentDoc>(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    agentId: { type: String, required: true },
    toolCode: { type: String, required: true },
    configurationJson: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the tool list of an agent and removing them all when the agent is deleted.
agentToolAttachmentSchema.index({ organizationId: 1, agentId: 1, createdAt: 1 });

/** Agent `agentId` may call agent `targetAgentId`; `instructions` tell it when and how. */
export interface AgentLinkDoc {
  /** `<organizationId>:<agentId>:<targetAgentId>`: one link per pair. */
  _id: string;
  organizationId: string;
  agentId: string;
  targetAgentId: string;
  instructions: string;
  createdAt: Date;
  updatedAt: Date;
}

export const agentLinkSchema = new Schema<AgentLinkDoc>(
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
