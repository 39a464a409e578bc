import { findOwned } from './owned';
import type { ApiKeyDoc, PermissionMap } from '@lib/db/api-key.schema';
import type { Models } from '@lib/db/models';
import type { PageRequest } from '@lib/paging';
import { findPage } from './find-page';
import { TenantRepository } from './tenant-repository';

export interface ApiKeyView {
  apiKeyId: string;
  organizationId: string;
  description: string;
  permissions: PermissionMap;
  keyPrefix: string;
  creatorUserId: string;
  lastUsedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function toApiKeyView(k: ApiKeyDoc): ApiKeyView {
  return {
    apiKeyId: k._id,
    organizationId: k.organizationId,
    description: k.description,
    permissions: k.permissions,
    keyPrefix: k.keyPrefix,
    creatorUserId: k.creatorUserId,
    lastUsedAt: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
    createdAt: k.createdAt.toISOString(),
    updatedAt: k.updatedAt.toISOString(),
  };
}

/** API keys of one organization; every query is scoped to it. */
export class ApiKeysRepository extends TenantRepository<ApiKeyDoc> {
  async list(opts: PageRequest) {
    const filter = this.scope();
    return findPage(this.models.ApiKey, filter, { createdAt: 1, _id: 1 }, opts);
  }

  get(id: string) {
    return findOwned(this.models.ApiKey, id, this.organizationId);
  }

  async create(fields: Omit<ApiKeyDoc, 'organizationId' | 'createdAt' | 'updatedAt' | 'lastUsedAt'>) {
    const doc = await this.models.ApiKey.create({ ...fields, organizationId: this.organizationId });
    return doc.toObject();
  }

  update(id: string, fields: { description?: string; permissions?: PermissionMap }) {
    return this.models.ApiKey.findOneAndUpdate(
      this.scope({ _id: id }),
      { $set: fields },
      { new: true },
    ).lean();
  }

  async remove(id: string): Promise<boolean> {
    const res = await this.models.ApiKey.deleteOne(this.scope({ _id: id }));
    return res.deletedCount === 1;
  }
}

/** Authentication has only the key, not the organization: the one lookup across organizations. */
export function findApiKeyCrossOrg(models: Models, apiKeyId: string) {
  return models.ApiKey.findById(apiKeyId).lean();
}
