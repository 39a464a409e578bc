import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** A person's account. Accounts are global; membership in an organization is a Member. */
export const userSchema = new Schema(
  {
    _id: { type: String, required: true },
    email: { type: String, required: true },
    name: { type: String, required: true },
    sourceId: String,
  },
  { timestamps: true, versionKey: false },
);
// Serves: finding the account for an invitation or assume-role by email.
userSchema.index({ email: 1 }, { unique: true });

export type UserDoc = DocOf<typeof userSchema>;
export const userModel = defineModel('User', 'users', userSchema);
