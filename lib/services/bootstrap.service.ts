import { generateApiKey } from '@lib/auth/api-key-secret';
import type { TokenService } from '@lib/auth/tokens';
import { API_KEY_SCOPES, type PermissionMap } from '@lib/db/api-key.schema';
import type { Models } from '@lib/db/models';
import { ApiKeysRepository } from '@lib/repositories/api-keys.repository';
import { MembersRepository } from '@lib/repositories/members.repository';
import { createOrganization } from '@lib/repositories/organizations.repository';
import { UserAccountsRepository } from '@lib/repositories/users.repository';

export const ALL_PERMISSIONS: PermissionMap = Object.fromEntries(
  API_KEY_SCOPES.map((scope) => [scope, { read: true, write: true }]),
);

/** Creates an organization with its owner, a session for the owner and an all-permissions API key. */
export async function bootstrapOrganization(
  models: Models,
  tokens: TokenService,
  input: { orgName: string; email: string; name: string },
) {
  const org = await createOrganization(models, input.orgName);
  const { user } = await new UserAccountsRepository(models).findOrCreate({
    email: input.email,
    name: input.name,
  });
  await new MembersRepository(models, org._id).add(user, 'owner');
  const { apiKeyId, key, keyHash, keyPrefix } = generateApiKey();
  await new ApiKeysRepository(models, org._id).create({
    _id: apiKeyId,
    description: 'bootstrap key (all permissions)',
    permissions: ALL_PERMISSIONS,
    keyHash,
    keyPrefix,
    creatorUserId: user._id,
  });
  const { token } = await tokens.signSession(org._id, user._id);
  return { organizationId: org._id, userId: user._id, sessionToken: token, apiKey: key };
}
