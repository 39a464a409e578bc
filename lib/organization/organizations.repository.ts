import type { Database } from '@lib/db/connection';
import { newId } from '@lib/ids';
import { organizationModel, type OrganizationDoc } from './organization.schema';

/** Creating a tenant is the one organization write with no tenant yet (bootstrap). */
export class OrganizationsCrossOrg {
  constructor(private readonly db: Database) {}

  async createOrganizationCrossOrg(name: string): Promise<OrganizationDoc> {
    const doc = await this.db
      .model(organizationModel)
      .create({ _id: newId('org'), name, pendingChanges: [] });
    return doc.toObject();
  }
}
