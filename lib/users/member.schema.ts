import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const ROLES = ['owner', 'admin', 'chat'] as const;
export type Role = (typeof ROLES)[number];

/** Membership of a user in one organization. Name, email and sourceId are copied from the account so
 * member search needs no join. `_id` is `<organizationId>:<userId>` (memberDocId). */
export const memberSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    userId: { type: String, required: true },
    role: { type: String, required: true, enum: ROLES },
    name: { type: String, required: true },
    email: { type: String, required: true },
    sourceId: String,
    userGroupId: { type: String, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the auth lookup of a member by (org, user) on every request; one membership per pair.
memberSchema.index({ organizationId: 1, userId: 1 }, { unique: true });
// Serves: the user list, ordered by creation.
memberSchema.index({ organizationId: 1, createdAt: 1 });
// Serves: moving members out of a deleted group.
memberSchema.index({ organizationId: 1, userGroupId: 1 });

export type MemberDoc = DocOf<typeof memberSchema>;
export const memberModel = defineModel('Member', 'members', memberSchema);
