import type { ApiKeysRepository } from './api-keys.repository';

/** The API keys feature's own collection, for one organization. */
export interface ApiKeysStore {
  apiKeys: ApiKeysRepository;
}
