import { TenantRepository } from '@lib/db/tenant-repository';
import { appApprovalModel, type AppApprovalDoc } from './app-approval.schema';

export type NewAppApproval = Omit<AppApprovalDoc, '_id' | 'organizationId' | 'versionId'> & {
  versionId: string;
};

/** An artifact's version: what an approval belongs to. */
export interface ArtifactVersionRef {
  artifactId: string;
  versionId: string;
}

/**
 * The approval's id: artifact and version. A versionId alone is not enough: ids can be derived (tool artifacts'
 * `ver_<key>`), so two artifacts may hold the same versionId, and one's approval must not approve the other.
 */
const approvalId = (ref: ArtifactVersionRef) => `${ref.artifactId}/${ref.versionId}`;

/** App manifest approvals of one organization, one per artifact version. */
export class AppApprovalsRepository extends TenantRepository {
  private readonly model = this.db.model(appApprovalModel);

  /**
   * The approval of this artifact's version, or null. Approvals made before the id named the artifact have the
   * versionId as their id: they count only for the artifact they name.
   */
  async get(ref: ArtifactVersionRef): Promise<AppApprovalDoc | null> {
    const approval = await this.findOwned(this.model, approvalId(ref));
    if (approval) return approval;
    const legacy = await this.findOwned(this.model, ref.versionId);
    return legacy?.artifactId === ref.artifactId ? legacy : null;
  }

  /** Approves a version again or for the first time: the newest approval replaces the previous one. */
  async put(approval: NewAppApproval): Promise<AppApprovalDoc> {
    const _id = approvalId(approval);
    const doc = await this.model
      .findOneAndReplace(
        { _id, organizationId: this.organizationId },
        { ...approval, _id, organizationId: this.organizationId },
        { upsert: true, new: true },
      )
      .lean<AppApprovalDoc>();
    return doc;
  }

  /** The artifacts among these whose given version is approved (one version per artifact: its current one). */
  async approvedAmong(refs: ArtifactVersionRef[]): Promise<Set<string>> {
    if (!refs.length) return new Set();
    const ids = refs.flatMap((ref) => [approvalId(ref), ref.versionId]);
    const docs = await this.model
      .find(this.scope<AppApprovalDoc>({ _id: { $in: ids } }), { _id: 1, artifactId: 1 })
      .lean<Array<Pick<AppApprovalDoc, '_id' | 'artifactId'>>>();
    const found = new Set(docs.map((d) => `${d._id}\n${d.artifactId}`));
    return new Set(
      refs
        .filter(
          (ref) =>
            found.has(`${approvalId(ref)}\n${ref.artifactId}`) ||
            found.has(`${ref.versionId}\n${ref.artifactId}`),
        )
        .map((ref) => ref.artifactId),
    );
  }
}
