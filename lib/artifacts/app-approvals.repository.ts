import { TenantRepository } from '@lib/db/tenant-repository';
import { appApprovalModel, type AppApprovalDoc } from './app-approval.schema';

export type NewAppApproval = Omit<AppApprovalDoc, '_id' | 'organizationId'> & { versionId: string };

/** App manifest approvals of one organization, one per artifact version. */
export class AppApprovalsRepository extends TenantRepository {
  private readonly model = this.db.model(appApprovalModel);

  /** The approval of this version (by primary key), or null. */
  get(versionId: string) {
    return this.findOwned(this.model, versionId);
  }

  /** Approves a version again or for the first time: the newest approval replaces the previous one. */
  async put(approval: NewAppApproval): Promise<AppApprovalDoc> {
    const { versionId, ...fields } = approval;
    const doc = await this.model
      .findOneAndReplace(
        { _id: versionId, organizationId: this.organizationId },
        { ...fields, _id: versionId, organizationId: this.organizationId },
        { upsert: true, new: true },
      )
      .lean<AppApprovalDoc>();
    return doc;
  }

  /** Which of these versions are approved. */
  async approvedAmong(versionIds: string[]): Promise<Set<string>> {
    if (!versionIds.length) return new Set();
    const docs = await this.model
      .find(this.scope<AppApprovalDoc>({ _id: { $in: versionIds } }), { _id: 1 })
      .lean<Array<Pick<AppApprovalDoc, '_id'>>>();
    return new Set(docs.map((d) => d._id));
  }
}
