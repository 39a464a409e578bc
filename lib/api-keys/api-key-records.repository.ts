import { readById, type Database } from '@lib/db/connection';
import { apiKeyModel, type ApiKeyDoc } from './api-key.schema';

/** API key records by id alone: authentication has only the key, not the organization; the key carries its
 * record id. */
export class ApiKeysCrossOrg {
  constructor(private readonly db: Database) {}

  findApiKeyCrossOrg(apiKeyId: string) {
    return readById(this.db.model(apiKeyModel), apiKeyId) as Promise<ApiKeyDoc | null>;
  }
}
