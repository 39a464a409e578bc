import { Schema } from 'mongoose';

export type Role = 'owner' | 'admin' | 'chat';

/** Membership of a user in one organization. Name, email and sourceId are copied from the account so
 * member search needs no join. */
export interface MemberDoc {
  _id: string;
  organizationId: string;
  userId: string;
  role: Role;
  name: string;
  email: string;
  sourceId?: string;
  userGroupId?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const memberSchema = new Schema<MemberDoc>(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    userId: { type: String, required: true },
    role: { type: String, required: true, enum: ['owner', 'admin', 'chat'] },
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
