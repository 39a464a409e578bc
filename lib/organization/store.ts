import type { OrganizationRepository } from './organization.repository';

/** The organization feature's own collection (the organization record), for one organization. */
export interface OrganizationStore {
  organization: OrganizationRepository;
}
