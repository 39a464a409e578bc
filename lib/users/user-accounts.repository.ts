import type { Database } from '@lib/db/connection';
import { findOrCreate } from '@lib/db/duplicate-key';
import { newId } from '@lib/ids';
import { userModel, type UserDoc } from './user.schema';

/** Accounts are global identities (a person may belong to several organizations), so this repository
 * is not tenant-scoped; it never returns membership or organization data. */
export class UserAccountsRepository {
  private readonly model;

  constructor(db: Database) {
    this.model = db.model(userModel);
  }

  findByEmail(email: string) {
    return this.model.findOne({ email: email.toLowerCase() }).lean<UserDoc>();
  }

  findBySourceId(sourceId: string) {
    return this.model.findOne({ sourceId }).lean<UserDoc>();
  }

  async create(fields: { email: string; name: string; sourceId?: string }): Promise<UserDoc> {
    const doc = await this.model.create({ _id: newId('usr'), ...fields, email: fields.email.toLowerCase() });
    return doc.toObject();
  }

  /** Returns the account for this email, creating it when absent; `created` tells which. */
  async findOrCreate(fields: { email: string; name: string; sourceId?: string }) {
    const { doc, created } = await findOrCreate(
      () => this.findByEmail(fields.email),
      () => this.create(fields),
    );
    return { user: doc, created };
  }
}
