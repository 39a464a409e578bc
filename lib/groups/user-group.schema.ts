import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const userGroupSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    name: { type: String, required: true },
    description: { type: String, default: '' },
    fullAccess: { type: Boolean, default: false },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the group list. (The default group is Organization.defaultUserGroupId: one field, so at most one.)
userGroupSchema.index({ organizationId: 1, createdAt: 1 });

export type UserGroupDoc = DocOf<typeof userGroupSchema>;
export const userGroupModel = defineModel('UserGroup', 'user_groups', userGroupSchema);
