import { findPage } from '@lib/db/find-page';
import { CredentialRepository } from '@lib/db/tenant-repository';
import { pickView } from '@lib/db/view';
import type { PageRequest } from '@lib/paging';
import { apiKeyModel, type ApiKeyDoc, type PermissionMap } from './api-key.schema';

export function toApiKeyView(k: ApiKeyDoc) {
  return {
    apiKeyId: k._id,
    ...pickView(k, [
      'organizationId',
      'description',
      'permissions',
      'keyPrefix',
      'creatorUserId',
      'lastUsedAt',
      'createdAt',
      'updatedAt',
    ]),
  };
}

/** API keys of one organization; every query is scoped to it, and every write but `touch` announced. */
export class ApiKeysRepository extends CredentialRepository {
  private readonly model = this.db.model(apiKeyModel);

  async list(opts: PageRequest) {
    const { items, total } = await findPage(this.model, this.scope(), { createdAt: 1, _id: 1 }, opts);
    return { items: items as ApiKeyDoc[], total };
  }

  async get(id: string) {
    return (await this.findOwned(this.model, id)) as ApiKeyDoc | null;
  }

  async create(
    fields: Pick<
      ApiKeyDoc,
      '_id' | 'description' | 'permissions' | 'keyHash' | 'keyPrefix' | 'creatorUserId'
    >,
  ) {
    const doc = await this.write(() => this.model.create({ ...fields, organizationId: this.organizationId }));
    return doc.toObject() as ApiKeyDoc;
  }

  async update(id: string, fields: { description?: string; permissions?: PermissionMap }) {
    return (await this.write(() => this.updateOwned(this.model, id, { $set: fields }))) as ApiKeyDoc | null;
  }

  /** Records when the key was last used (bookkeeping for the key list; not announced: nothing authorizes by it). */
  async touch(id: string, at: Date) {
    // $max: a slower request that used the key earlier never moves it back.
    await this.model.updateOne(this.scope({ _id: id }), { $max: { lastUsedAt: at } });
  }

  remove(id: string): Promise<boolean> {
    return this.write(() => this.deleteOwned(this.model, id));
  }
}
