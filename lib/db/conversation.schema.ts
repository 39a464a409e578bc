import { Schema } from 'mongoose';

export interface FrontendTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface ConversationDoc {
  _id: string;
  organizationId: string;
  agentId: string;
  title: string;
  creatorUserId: string;
  isBrowserTask: boolean;
  lastMessageCreatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const conversationSchema = new Schema<ConversationDoc>(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    agentId: { type: String, required: true },
    title: { type: String, required: true },
    creatorUserId: { type: String, required: true },
    isBrowserTask: { type: Boolean, default: false },
    lastMessageCreatedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: a member's conversation list, newest activity first.
conversationSchema.index({ organizationId: 1, creatorUserId: 1, lastMessageCreatedAt: -1 });
// Serves: the all=true list and per-agent filters.
conversationSchema.index({ organizationId: 1, agentId: 1, lastMessageCreatedAt: -1 });
