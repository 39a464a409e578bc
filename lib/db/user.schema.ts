import { Schema } from 'mongoose';

/** A person's account. Accounts are global; membership in an organization is a Member. */
export interface UserDoc {
  _id: string;
  email: string;
  name: string;
  sourceId?: string;
  createdAt: Date;
  updatedAt: Date;
}

export const userSchema = new Schema<UserDoc>(
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
