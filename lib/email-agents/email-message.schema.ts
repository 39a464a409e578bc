import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const EMAIL_DIRECTIONS = ['inbound', 'outbound'] as const;
export const INBOUND_STATUSES = ['received', 'accepted', 'refused', 'ignored', 'replied'] as const;
export type InboundStatus = (typeof INBOUND_STATUSES)[number];

const nullableString = { type: String, default: null };

/**
 * A mail an agent received or sent. `_id` is `<organizationId>:<agentId>:<threadKey>` (threadKeyOf its
 * Message-ID): a later mail that refers to this one (In-Reply-To / References) finds it by primary key, and only
 * within the same organization and agent. Inbound mail without a Message-ID is keyed by its content's hash.
 */
export const emailMessageSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    agentId: { type: String, required: true },
    direction: { type: String, enum: EMAIL_DIRECTIONS, required: true },
    /** Without angle brackets; null for inbound mail that had none. */
    messageId: nullableString,
    conversationId: nullableString,
    requestId: nullableString,
    /** Inbound: the workflow run that took this mail; another run with the same key is a duplicate delivery. */
    runId: nullableString,
    status: { type: String, enum: [...INBOUND_STATUSES, null], default: null },
    /** Why an inbound mail was refused or ignored (never the sender's address). */
    reason: nullableString,
    /** Inbound: what a reply needs. */
    fromAddress: nullableString,
    subject: nullableString,
    references: { type: [String], default: [] },
    replyMessageId: nullableString,
  },
  { timestamps: true, versionKey: false },
);
// Reads are by `_id` only (thread lookups and the workflow's own record); this serves removal per agent.
emailMessageSchema.index({ organizationId: 1, agentId: 1 });

export type EmailMessageDoc = DocOf<typeof emailMessageSchema>;
export const emailMessageModel = defineModel('EmailMessage', 'email_messages', emailMessageSchema);
