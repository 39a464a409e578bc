/**
 * A feature's own collections, one organization at a time. Each feature names its collections in its
 * `store.ts` (for example `Tenants<AgentsStore>`); lib/repositories.ts is the one object that holds them all,
 * and lib/services.ts hands each feature only its own. Another feature's data is reached through that
 * feature's service or a narrow port, so every collection has one writer (.dependency-cruiser.cjs).
 */
export interface Tenants<Store> {
  tenant(organizationId: string): Store;
}
