import { API_KEY_SCOPES, type PermissionMap } from '@lib/api-keys/api-key.schema';
import type { TokenService } from '@lib/auth/tokens';
import type { OrganizationsCrossOrg } from './organizations.repository';

export const ALL_PERMISSIONS: PermissionMap = Object.fromEntries(
  API_KEY_SCOPES.map((scope) => [scope, { read: true, write: true }]),
);

/**
 * What a new organization is made with: its record (a cross-organization write), its first owner (the
 * users feature) and its first key (the API keys feature). lib/deps.ts's `Deps` is one.
 */
export interface BootstrapDeps {
  repos: { organizations: OrganizationsCrossOrg };
  services: {
    users: {
      addOwner(organizationId: string, account: { email: string; name: string }): Promise<{ _id: string }>;
    };
    apiKeys: {
      issue(
        organizationId: string,
        fields: { description: string; permissions: PermissionMap; creatorUserId: string },
      ): Promise<{ key: string }>;
    };
  };
  tokens: Pick<TokenService, 'signSession'>;
}

/** Creates an organization with its owner, a session for the owner and an all-permissions API key. */
export async function bootstrapOrganization(
  deps: BootstrapDeps,
  input: { orgName: string; email: string; name: string },
) {
  const org = await deps.repos.organizations.createOrganizationCrossOrg(input.orgName);
  const user = await deps.services.users.addOwner(org._id, { email: input.email, name: input.name });
  const { key } = await deps.services.apiKeys.issue(org._id, {
    description: 'bootstrap key (all permissions)',
    permissions: ALL_PERMISSIONS,
    creatorUserId: user._id,
  });
  const { token } = await deps.tokens.signSession(org._id, user._id);
  return { organizationId: org._id, userId: user._id, sessionToken: token, apiKey: key };
}
