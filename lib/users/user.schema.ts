import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** A person's account. Accounts are global; membership in an organization is a Member (which holds the
 * organization's own external id for the person, `sourceId`). */
export const userSchema = new Schema(
  {
    _id: { type: String, required: true },
    email: { type: String, required: true },
    name: { type: String, required: true },
    /** `<issuer> <subject>` of the external OIDC identity that signs in as this account. Written only by the
     * OIDC sign-in, never from a tenant's input, so no organization can choose whose account an identity
     * opens. */
    oidcSubject: { type: String, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: finding the account for an invitation or assume-role by email.
userSchema.index({ email: 1 }, { unique: true });
// Serves: OIDC sign-in by (issuer, subject).
userSchema.index({ oidcSubject: 1 });

export type UserDoc = DocOf<typeof userSchema>;
export const userModel = defineModel('User', 'users', userSchema);
