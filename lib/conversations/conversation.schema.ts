import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const conversationSchema = new Schema(
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

export type ConversationDoc = DocOf<typeof conversationSchema>;
export const conversationModel = defineModel('Conversation', 'conversations', conversationSchema);
