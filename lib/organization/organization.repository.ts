import { readById, type Database } from '@lib/db/connection';
import { organizationModel, type OrganizationDoc } from './organization.schema';

/** The organization record of one tenant. */
export class OrganizationRepository {
  private readonly model;

  constructor(
    db: Database,
    readonly organizationId: string,
  ) {
    this.model = db.model(organizationModel);
  }

  get() {
    return readById(this.model, this.organizationId) as Promise<OrganizationDoc | null>;
  }

  /**
   * Applies a change computed from `read` only if nobody changed the settings since (else null: read again).
   * Records from before revisions existed have none, which the filter's null matches.
   */
  updateAt(read: Pick<OrganizationDoc, 'revision'>, set: Partial<OrganizationDoc>) {
    return this.model
      .findOneAndUpdate(
        { _id: this.organizationId, revision: read.revision ?? null },
        { $set: set, $inc: { revision: 1 } },
        { new: true },
      )
      .lean<OrganizationDoc>();
  }

  update(set: Partial<OrganizationDoc>) {
    return this.model
      .findByIdAndUpdate(this.organizationId, { $set: set }, { new: true })
      .lean<OrganizationDoc>();
  }

  /** The default user group id. It lives on the organization record: one field, so at most one default. */
  async defaultGroupId(): Promise<string | null> {
    const org = await this.model.findById(this.organizationId, { defaultUserGroupId: 1 }).lean();
    return org?.defaultUserGroupId ?? null;
  }

  async setDefaultGroup(userGroupId: string) {
    await this.model.updateOne({ _id: this.organizationId }, { $set: { defaultUserGroupId: userGroupId } });
  }

  /** Clears the default only if it is still `userGroupId` (a concurrent request may have moved it). */
  async unsetDefaultGroup(userGroupId: string) {
    await this.model.updateOne(
      { _id: this.organizationId, defaultUserGroupId: userGroupId },
      { $set: { defaultUserGroupId: null } },
    );
  }
}
