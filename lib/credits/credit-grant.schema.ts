import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** One change of an organization's credits other than usage: the starting balance, an operator's grant or
 * correction (negative). Kept so every balance can be explained from its grants and its usage. */
export const creditGrantSchema = new Schema(
  {
    /** The grantId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    amount: { type: Number, required: true },
    note: { type: String, default: null },
    balanceAfter: { type: Number, required: true },
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);
// Serves: an organization's most recent grants (`cli credits show`).
creditGrantSchema.index({ organizationId: 1, createdAt: -1 });

export type CreditGrantDoc = DocOf<typeof creditGrantSchema>;
export const creditGrantModel = defineModel('CreditGrant', 'credit_grants', creditGrantSchema);
