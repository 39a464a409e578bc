import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { forbidden, unauthorized } from '@lib/errors';
import type { ApiKeyDoc } from '@lib/api-keys/api-key.schema';
import type { MemberDoc } from '@lib/users/member.schema';
import { API_KEY_PREFIX, apiKeyIdOf, apiKeyMatches } from './api-key-secret';
import type { RequestContext } from './context';
import type { CredentialCache } from './credential-cache';
import { ROLE_CAPABILITIES } from './roles';
import { InvalidTokenError, type TokenService } from './tokens';

/** API key `lastUsedAt` is kept to this resolution. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export interface OidcSettings {
  issuer: string;
  jwksUrl?: string;
  audience: string;
}

/**
 * The records credentials are checked against: keys are found across organizations (lib/db), memberships and
 * accounts belong to the users feature, keys to the API keys feature (wired in lib/deps.ts).
 */
export interface CredentialRecords {
  apiKeyRecords: { findApiKeyCrossOrg(apiKeyId: string): Promise<ApiKeyDoc | null> };
  users: {
    member(organizationId: string, userId: string): Promise<MemberDoc | null>;
    /** The account of an external identity, linked at first sign-in through an address the issuer verified. */
    accountOfIdentity(subject: string, verifiedEmail: string | undefined): Promise<{ _id: string } | null>;
  };
  apiKeys: { touch(organizationId: string, apiKeyId: string, at: Date): Promise<unknown> };
}

/**
 * Turns a bearer credential into a RequestContext for the organization named in the path. Three kinds:
 * API keys (`awk_…`), service-signed JWTs (sessions and assume-role tokens) and, when configured, ID/access
 * tokens of an external OIDC issuer verified through its JWKS. A credential of another organization fails
 * exactly like an unknown one, so it reveals nothing about the other tenant.
 */
export class Authenticator {
  private readonly jwks?: ReturnType<typeof createRemoteJWKSet>;
  /** When this process last wrote each key's lastUsedAt, so concurrent requests do not all write it. */
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly records: CredentialRecords,
    private readonly tokens: TokenService,
    private readonly oidc?: OidcSettings,
    /** Key records and memberships, read on every request; without it each request reads them. */
    private readonly cache?: CredentialCache,
  ) {
    if (oidc) {
      const url = oidc.jwksUrl ?? `${oidc.issuer.replace(/\/$/, '')}/.well-known/jwks.json`;
      this.jwks = createRemoteJWKSet(new URL(url));
    }
  }

  async authenticate(authorization: string | undefined, organizationId: string): Promise<RequestContext> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match?.[1]) throw unauthorized('Authorization: Bearer <token> is required');
    const credential = match[1];
    if (credential.startsWith(API_KEY_PREFIX)) return this.fromApiKey(credential, organizationId);
    if (this.oidc && this.isOidcToken(credential)) return this.fromOidc(credential, organizationId);
    return this.fromServiceToken(credential, organizationId);
  }

  /**
   * The organization a credential belongs to, for clients that name none (a WebSocket presenting only its
   * token): an API key's record or a service token's `org` claim. Null when the credential does not say.
   */
  async organizationOf(authorization: string | undefined): Promise<string | null> {
    const credential = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (!credential) return null;
    if (credential.startsWith(API_KEY_PREFIX)) {
      const apiKeyId = apiKeyIdOf(credential);
      const record = apiKeyId ? await this.records.apiKeyRecords.findApiKeyCrossOrg(apiKeyId) : null;
      return record && apiKeyMatches(credential, record.keyHash) ? record.organizationId : null;
    }
    try {
      return (await this.tokens.verify(credential)).organizationId;
    } catch {
      return null;
    }
  }

  private async fromApiKey(key: string, organizationId: string): Promise<RequestContext> {
    const apiKeyId = apiKeyIdOf(key);
    const record = apiKeyId
      ? await this.cached(`key:${apiKeyId}`, () => this.records.apiKeyRecords.findApiKeyCrossOrg(apiKeyId))
      : null;
    if (!record || !apiKeyMatches(key, record.keyHash)) throw unauthorized('invalid API key');
    // A working key on another organization's path: say so (its holder knows its organization already).
    if (record.organizationId !== organizationId)
      throw unauthorized('API key is not valid for this organization');
    // The key acts on behalf of its creator: it loses its rights when the creator leaves.
    const member = await this.member(organizationId, record.creatorUserId, 'the creator of this API key');
    this.touch(organizationId, record._id, record.lastUsedAt);
    return {
      ...memberContext(member, 'api_key'),
      apiKeyId: record._id,
      apiKeyPermissions: record.permissions,
    };
  }

  /**
   * Records that a key was used, to the minute: writing on every request would turn every API-key read into
   * a read plus a write (the dominant cost of a read on the bench). Best effort and never awaited: a failed
   * bookkeeping write must neither fail the request nor surface as an unhandled rejection.
   */
  private touch(organizationId: string, apiKeyId: string, storedLastUsedAt: Date | null | undefined): void {
    const now = Date.now();
    const last = Math.max(storedLastUsedAt?.getTime() ?? 0, this.lastTouched.get(apiKeyId) ?? 0);
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    if (this.lastTouched.size >= 10_000) this.lastTouched.clear();
    this.lastTouched.set(apiKeyId, now);
    this.records.apiKeys
      .touch(organizationId, apiKeyId, new Date(now))
      .catch(() => this.lastTouched.delete(apiKeyId));
  }

  private async fromServiceToken(token: string, organizationId: string): Promise<RequestContext> {
    let claims;
    try {
      claims = await this.tokens.verify(token);
    } catch (err) {
      if (err instanceof InvalidTokenError) throw unauthorized(err.message);
      throw err;
    }
    if (claims.organizationId !== organizationId)
      throw unauthorized('token is not valid for this organization');
    const member = await this.member(organizationId, claims.userId, 'the token subject');
    if (claims.type === 'assume_role') {
      return {
        organizationId,
        userId: member.userId,
        role: 'chat',
        capabilities: ROLE_CAPABILITIES.chat,
        via: 'assume_role',
        userGroupId: member.userGroupId ?? null,
        tokenPermissions: claims.permissions,
        expiresAt: claims.expiresAt,
      };
    }
    return { ...memberContext(member, 'session'), expiresAt: claims.expiresAt };
  }

  private isOidcToken(token: string): boolean {
    try {
      return decodeJwt(token).iss === this.oidc?.issuer;
    } catch {
      return false;
    }
  }

  private async fromOidc(token: string, organizationId: string): Promise<RequestContext> {
    if (!this.jwks || !this.oidc) throw unauthorized();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        issuer: this.oidc.issuer,
        audience: this.oidc.audience,
      }));
    } catch {
      throw unauthorized('token signature or claims are invalid');
    }
    if (typeof payload.sub !== 'string' || !payload.sub) throw unauthorized('token has no subject');
    const verifiedEmail =
      payload.email_verified === true && typeof payload.email === 'string' ? payload.email : undefined;
    const account = await this.records.users.accountOfIdentity(
      `${this.oidc.issuer} ${payload.sub}`,
      verifiedEmail,
    );
    if (!account) throw unauthorized('no account for this identity');
    const ctx = memberContext(await this.member(organizationId, account._id, 'this identity'), 'session');
    return payload.exp ? { ...ctx, expiresAt: new Date(payload.exp * 1000) } : ctx;
  }

  private async member(organizationId: string, userId: string, who: string): Promise<MemberDoc> {
    const member = await this.cached(`member:${organizationId}:${userId}`, () =>
      this.records.users.member(organizationId, userId),
    );
    if (!member) throw unauthorized(`${who} is not a member of this organization`);
    return member;
  }

  private cached<T extends { organizationId: string }>(key: string, load: () => Promise<T | null>) {
    return this.cache ? this.cache.read(key, load) : load();
  }
}

/** What a member may do in their organization, acting through `via`. */
export function memberContext(member: MemberDoc, via: RequestContext['via']): RequestContext {
  return {
    organizationId: member.organizationId,
    userId: member.userId,
    role: member.role,
    capabilities: ROLE_CAPABILITIES[member.role],
    via,
    userGroupId: member.userGroupId ?? null,
  };
}

/** Routes that manage credentials need a person, not a key or an embedded-chat token. */
export function requireUserSession(ctx: RequestContext): void {
  if (ctx.via !== 'session')
    throw forbidden('this operation requires a signed-in user session, not an API key');
}
