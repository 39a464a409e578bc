import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/**
 * The credit balance of one organization (`_id` is the organization id, so every read and write is a
 * primary-key access). Changed only with `$inc`: concurrent debits and grants never lose an update, on a
 * database without transactions. Opened on first use with the starting balance (see CreditsService).
 */
export const creditAccountSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    /** Whole credits; may be negative: the call that crosses zero is charged in full, later ones get 402. */
    balance: { type: Number, required: true },
    /** Everything ever granted, the starting balance and corrections included. */
    granted: { type: Number, required: true },
    /** Everything ever debited for usage. */
    spent: { type: Number, required: true },
  },
  { timestamps: true, versionKey: false },
);

export type CreditAccountDoc = DocOf<typeof creditAccountSchema>;
export const creditAccountModel = defineModel('CreditAccount', 'credit_accounts', creditAccountSchema);
