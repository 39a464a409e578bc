import mongoose, { type Connection } from 'mongoose';
import { apiKeySchema } from './api-key.schema';
import { memberSchema } from './member.schema';
import { organizationSchema } from './organization.schema';
import { userGroupSchema } from './user-group.schema';
import { userSchema } from './user.schema';

export function createModels(conn: Connection) {
  return {
    Organization: conn.model('Organization', organizationSchema, 'organizations'),
    User: conn.model('User', userSchema, 'users'),
    Member: conn.model('Member', memberSchema, 'members'),
    UserGroup: conn.model('UserGroup', userGroupSchema, 'user_groups'),
    ApiKey: conn.model('ApiKey', apiKeySchema, 'api_keys'),
  };
}

export type Models = ReturnType<typeof createModels>;

export async function connectDatabase(uri: string): Promise<{ conn: Connection; models: Models }> {
  const conn = mongoose.createConnection(uri, { serverSelectionTimeoutMS: 10_000, autoIndex: true });
  await conn.asPromise();
  const models = createModels(conn);
  await Promise.all(Object.values(models).map((m) => m.init()));
  return { conn, models };
}
