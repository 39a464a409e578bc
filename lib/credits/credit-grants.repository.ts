import { TenantRepository } from '@lib/db/tenant-repository';
import { newId } from '@lib/ids';
import { creditGrantModel, type CreditGrantDoc } from './credit-grant.schema';

/** The grants and corrections of one organization's credits. */
export class CreditGrantsRepository extends TenantRepository {
  private readonly model = this.db.model(creditGrantModel);

  async create(fields: { amount: number; note: string | null; balanceAfter: number }) {
    const doc = await this.model.create({
      ...fields,
      _id: newId('grant'),
      organizationId: this.organizationId,
    });
    return doc.toObject() as CreditGrantDoc;
  }

  /** The newest `limit` grants, newest first. */
  recent(limit: number) {
    return this.model
      .find(this.scope<CreditGrantDoc>())
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit)
      .lean<CreditGrantDoc[]>();
  }
}
