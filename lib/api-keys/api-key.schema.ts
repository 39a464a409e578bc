import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const API_KEY_SCOPES = [
  'agents',
  'conversations',
  'knowledge_bases',
  'tools',
  'integrations',
  'prompts',
  'webhooks',
  'assume_role',
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
export type PermissionMap = Partial<Record<ApiKeyScope, { read?: boolean; write?: boolean }>>;

export const apiKeySchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    description: { type: String, default: '' },
    permissions: { type: Schema.Types.Mixed, default: {} },
    /** sha256 of the key; the key itself is never stored. */
    keyHash: { type: String, required: true },
    keyPrefix: { type: String, required: true },
    creatorUserId: { type: String, required: true },
    lastUsedAt: { type: Date, default: null },
  },
  { timestamps: true, minimize: false, versionKey: false },
);
// Serves: authenticating a request by the hash of its key.
apiKeySchema.index({ keyHash: 1 }, { unique: true });
// Serves: the key list of an organization.
apiKeySchema.index({ organizationId: 1, createdAt: 1 });

export type ApiKeyDoc = Omit<DocOf<typeof apiKeySchema>, 'permissions'> & { permissions: PermissionMap };
export const apiKeyModel = defineModel('ApiKey', 'api_keys', apiKeySchema);
