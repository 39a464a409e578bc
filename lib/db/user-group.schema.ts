import { Schema } from 'mongoose';

export interface UserGroupDoc {
  _id: string;
  organizationId: string;
  name: string;
  description: string;
  fullAccess: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export const userGroupSchema = new Schema<UserGroupDoc>(
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
