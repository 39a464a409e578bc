import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

// A content part has a field named `type`, which mongoose reserves unless the type key is renamed.
const contentPartSchema = new Schema(
  {
    type: { $type: String, required: true, enum: ['text'] as const },
    // Required, but it may be empty: a model can answer nothing, and that reply must still be stored (mongoose's
    // `required` refuses '', which left such a turn retrying its saveReply for ever).
    text: {
      $type: String,
      required: function (this: { text?: unknown }) {
        return typeof this.text !== 'string';
      },
    },
  },
  { typeKey: '$type', _id: false },
);

export const messageSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    conversationId: { type: String, required: true },
    role: { type: String, required: true, enum: ['user', 'assistant'] as const },
    content: { type: [contentPartSchema] },
    /** The turn this message belongs to; (conversation, requestId, role) is unique, so retries never duplicate. */
    requestId: { type: String, required: true },
    status: { type: String, default: 'complete', enum: ['complete', 'error'] as const },
    /** Order within the conversation: microseconds since the epoch, strictly increasing within a process, so
     * messages written in the same millisecond (a pre-filled reply and the user's message) keep their order. */
    seq: { type: Number, required: true },
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
// Serves: loading a conversation's history in order.
messageSchema.index({ organizationId: 1, conversationId: 1, seq: 1 });
// Serves: idempotent writes of a turn's messages.
messageSchema.index({ organizationId: 1, conversationId: 1, requestId: 1, role: 1 }, { unique: true });

export type MessageDoc = DocOf<typeof messageSchema>;
export const messageModel = defineModel('Message', 'messages', messageSchema);
