import type { Role } from '@lib/users/member.schema';
import type { PermissionMap } from '@lib/api-keys/api-key.schema';
import type { Capability } from './roles';

/** `app`: a pinned app's bridge, acting for the member who opened it, within the app's approved manifest. */
export type AuthVia = 'session' | 'api_key' | 'assume_role' | 'app';

/** Who is calling, in which organization, with what rights. Built once per request by auth. */
export interface RequestContext {
  organizationId: string;
  userId: string;
  role: Role;
  capabilities: ReadonlySet<Capability>;
  via: AuthVia;
  /** The caller's own user group as auth read it with the member (null: none); absent where auth did not read
   * the member, so agent access reads it. Saves that read on every agent access check. */
  userGroupId?: string | null;
  apiKeyId?: string;
  /** API key permission map (via api_key) */
  apiKeyPermissions?: PermissionMap;
  /** Permission strings embedded in an assume-role token (via assume_role) */
  tokenPermissions?: string[];
  /** When the credential stops being valid (tokens); API keys last until they are revoked. */
  expiresAt?: Date;
}
