import type { FilterQuery, Model, UpdateQuery } from 'mongoose';
import { readById, type Database } from './connection';

interface Owned {
  organizationId: string;
}

/**
 * Base of every repository of one organization's data: it is built with the organization, `scope()` adds it
 * to every filter, and the by-id helpers match it too, so no query can forget the tenant.
 */
export abstract class TenantRepository {
  constructor(
    protected readonly db: Database,
    readonly organizationId: string,
  ) {}

  protected scope<T>(filter: FilterQuery<NoInfer<T>> = {}): FilterQuery<T> {
    return { ...filter, organizationId: this.organizationId };
  }

  // Reads by `_id` use the primary key alone (the embedded database scans a collection for any other filter) and check
  // the organization after the read: a document's organizationId never changes, so this is as safe as
  // filtering on it. Writes filter on both, so a write can never reach another organization's document.

  protected async findOwned<T extends Owned>(model: Model<T>, id: string): Promise<T | null> {
    const doc = await readById(model, id);
    return doc && doc.organizationId === this.organizationId ? doc : null;
  }

  protected updateOwned<T extends Owned>(model: Model<T>, id: string, update: UpdateQuery<T>) {
    return model
      .findOneAndUpdate({ _id: id, organizationId: this.organizationId }, update, { new: true })
      .lean<T>();
  }

  protected async deleteOwned<T extends Owned>(model: Model<T>, id: string): Promise<boolean> {
    const res = await model.deleteOne({ _id: id, organizationId: this.organizationId });
    return res.deletedCount === 1;
  }
}

/** Told after a write to an organization's API keys, memberships or webhooks (lib/auth/credential-cache.ts). */
export type CredentialsChanged = (organizationId: string) => Promise<void>;

/**
 * Base of the repositories whose documents authenticate requests (API keys, memberships, a webhook's signing
 * settings): every write to them goes through `write`, which announces the change once the write has run, so no
 * cached copy outlives it.
 */
export abstract class CredentialRepository extends TenantRepository {
  constructor(
    db: Database,
    organizationId: string,
    private readonly credentialsChanged: CredentialsChanged,
  ) {
    super(db, organizationId);
  }

  protected async write<T>(run: () => PromiseLike<T>): Promise<T> {
    try {
      return await run();
    } finally {
      // Also after a failed write: it may have been applied before the error reached us.
      await this.credentialsChanged(this.organizationId);
    }
  }
}
