import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** What a model call was for: every feature that calls a model on an organization's behalf names itself. */
export const USAGE_PURPOSES = ['chain-from-prompt', 'chain-step', 'analysis'] as const;
export type UsagePurpose = (typeof USAGE_PURPOSES)[number];

/** One model call made for an organization: its tokens and what it cost in credits. */
export const llmUsageSchema = new Schema(
  {
    /** The usageId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    purpose: { type: String, enum: USAGE_PURPOSES, required: true },
    model: { type: String, required: true },
    promptTokens: { type: Number, required: true },
    completionTokens: { type: Number, required: true },
    /** False when the model server reported no usage (then the call was recorded with 0 tokens, free). */
    usageReported: { type: Boolean, required: true },
    cost: { type: Number, required: true },
    /** The organization's balance right after this call's debit (a ledger an operator can follow). */
    balanceAfter: { type: Number, required: true },
    /** The member the call was made for (the caller, or whoever a run acts as); null for system work. */
    userId: { type: String, default: null },
    /** What the call belonged to, for the reader of the ledger (e.g. a chain run and step). */
    reference: { type: String, default: null },
    /** Order among calls recorded in the same millisecond (nextSeq); null on calls recorded before it existed. */
    seq: { type: Number, default: null },
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
// Serves: an organization's most recent usage (GET /orgs/{org}/credits, `cli credits show`).
llmUsageSchema.index({ organizationId: 1, createdAt: -1, seq: -1 });

export type LlmUsageDoc = DocOf<typeof llmUsageSchema>;
export const llmUsageModel = defineModel('LlmUsage', 'llm_usage', llmUsageSchema);
