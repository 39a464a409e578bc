import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const agentKbAttachmentSchema = new Schema(
  {
    /** agentKbDocId(...): one attachment per agent and knowledge base (a second one collides). */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    agentId: { type: String, required: true },
    knowledgeBaseId: { type: String, required: true },
    /** The organization that owns the knowledge base (another one's, when it is public). */
    kbOrganizationId: { type: String, required: true },
    kbTitle: { type: String, required: true },
    creatorUserId: { type: String, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: an agent's attachments (list, and the search tool of its turns).
agentKbAttachmentSchema.index({ organizationId: 1, agentId: 1, createdAt: 1 });
// Serves: removing every attachment of a deleted knowledge base, in any organization.
agentKbAttachmentSchema.index({ kbOrganizationId: 1, knowledgeBaseId: 1 });

export type AgentKbAttachmentDoc = DocOf<typeof agentKbAttachmentSchema>;
export const agentKbAttachmentModel = defineModel(
  'AgentKnowledgeBase',
  'agent_knowledge_bases',
  agentKbAttachmentSchema,
);

export const agentKbDocId = (
  organizationId: string,
  agentId: string,
  kbOrganizationId: string,
  knowledgeBaseId: string,
) => `${organizationId}:${agentId}:${kbOrganizationId}:${knowledgeBaseId}`;
