import { API_KEY_SCOPES, type PermissionMap } from '@lib/api-keys/api-key.schema';
import { generateApiKey } from '@lib/auth/api-key-secret';
import type { TokenService } from '@lib/auth/tokens';
import type { Repositories } from '@lib/repositories';

export const ALL_PERMISSIONS: PermissionMap = Object.fromEntries(
  API_KEY_SCOPES.map((scope) => [scope, { read: true, write: true }]),
);

/** Creates an organization with its owner, a session for the owner and an all-permissions API key. */
export async function bootstrapOrganization(
  repos: Repositories,
  tokens: TokenService,
  input: { orgName: string; email: string; name: string },
) {
  const org = await repos.crossOrg.createOrganizationCrossOrg(input.orgName);
  const tenant = repos.tenant(org._id);
  const { user } = await repos.accounts.findOrCreate({ email: input.email, name: input.name });
  await tenant.members.add(user, 'owner');
  const { apiKeyId, key, keyHash, keyPrefix } = generateApiKey();
  await tenant.apiKeys.create({
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
