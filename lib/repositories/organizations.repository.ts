import type { Models } from '@lib/db/models';
import type { OrganizationDoc, PendingChange } from '@lib/db/organization.schema';
import { newId } from '@lib/ids';

/** The organization record of one tenant. */
export class OrganizationRepository {
  constructor(
    private readonly models: Models,
    readonly organizationId: string,
  ) {}

  get() {
    return this.models.Organization.findById(this.organizationId).lean();
  }

  update(set: Partial<OrganizationDoc>) {
    return this.models.Organization.findByIdAndUpdate(
      this.organizationId,
      { $set: set },
      { new: true },
    ).lean();
  }
}

/** Creating a tenant is the one organization write with no tenant yet (bootstrap CLI). */
export async function createOrganization(models: Models, name: string): Promise<OrganizationDoc> {
  const doc = await models.Organization.create({ _id: newId('org'), name, pendingChanges: [] });
  return doc.toObject();
}

export type { PendingChange };
