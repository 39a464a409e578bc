import { driverCollection } from '@lib/db/connection';
import { isDuplicateKey } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import { creditAccountModel, type CreditAccountDoc } from './credit-account.schema';

/** The credit account of one organization. Every change is one `$inc` on its document: no read-modify-write. */
export class CreditAccountRepository extends TenantRepository {
  private readonly model = this.db.model(creditAccountModel);

  get() {
    return this.findOwned(this.model, this.organizationId);
  }

  /**
   * Opens the account with `startingBalance` unless it exists; true when this call opened it. Concurrent
   * first uses race on the primary key: exactly one inserts, the others find it there.
   */
  async open(startingBalance: number): Promise<boolean> {
    try {
      const res = await this.model.updateOne(
        { _id: this.organizationId, organizationId: this.organizationId },
        {
          $setOnInsert: { balance: startingBalance, granted: startingBalance, spent: 0 },
        },
        { upsert: true },
      );
      return res.upsertedCount === 1;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** Takes `amount` credits (≥ 0) for usage; the account after, or null when it is not open yet. */
  debit(amount: number) {
    // Every billed model call (each chain step) debits: through the driver (see driverCollection).
    return driverCollection(this.model).findOneAndUpdate(
      { _id: this.organizationId, organizationId: this.organizationId },
      { $inc: { balance: -amount, spent: amount }, $set: { updatedAt: new Date() } },
      { returnDocument: 'after' },
    ) as Promise<CreditAccountDoc | null>;
  }

  /** Adds `amount` credits (negative: a correction); the account after, or null when it is not open yet. */
  grant(amount: number) {
    return this.updateOwned(this.model, this.organizationId, {
      $inc: { balance: amount, granted: amount },
    }) as Promise<CreditAccountDoc | null>;
  }
}
