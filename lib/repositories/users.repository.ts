import type { Models } from '@lib/db/models';
import type { UserDoc } from '@lib/db/user.schema';
import { newId } from '@lib/ids';

/** Accounts are global identities (a person may belong to several organizations), so this repository
 * is not tenant-scoped; it never returns membership or organization data. */
export class UserAccountsRepository {
  constructor(private readonly models: Models) {}

  findByEmail(email: string) {
    return this.models.User.findOne({ email: email.toLowerCase() }).lean();
  }

  findBySourceId(sourceId: string) {
    return this.models.User.findOne({ sourceId }).lean();
  }

  async create(fields: { email: string; name: string; sourceId?: string }): Promise<UserDoc> {
    const doc = await this.models.User.create({
      _id: newId('usr'),
      ...fields,
      email: fields.email.toLowerCase(),
    });
    return doc.toObject();
  }

  /** Returns the account for this email, creating it when absent; `created` tells which. */
  async findOrCreate(fields: { email: string; name: string; sourceId?: string }) {
    const existing = await this.findByEmail(fields.email);
    if (existing) return { user: existing, created: false };
    try {
      return { user: await this.create(fields), created: true };
    } catch (err) {
      // A concurrent request created it first (unique email index).
      const again = await this.findByEmail(fields.email);
      if (again) return { user: again, created: false };
      throw err;
    }
  }
}
