import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';

export const ASSUME_ROLE_TTL_SECONDS = 2 * 3600;
const AUDIENCE = 'agent-workspace-api';

export type TokenType = 'session' | 'assume_role';

export interface TokenClaims {
  type: TokenType;
  userId: string;
  organizationId: string;
  permissions: string[];
  issuedAt: Date;
  expiresAt: Date;
  tokenId: string;
}

export class InvalidTokenError extends Error {}

/** An app link: one member running one version of one pinned app (its own audience: useless anywhere else). */
export interface AppSessionClaims {
  organizationId: string;
  userId: string;
  artifactId: string;
  versionId: string;
  expiresAt: Date;
}
const APP_AUDIENCE = 'agent-workspace-app';

/**
 * Service-signed JWTs (HS256): user sessions and assume-role tokens. Both are bound to one organization
 * (claim `org`); `typ` tells them apart.
 */
export class TokenService {
  private readonly key: Uint8Array;

  constructor(
    secret: string,
    private readonly issuer: string,
    private readonly sessionTtlSeconds: number,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  signSession(organizationId: string, userId: string) {
    return this.sign('session', organizationId, userId, [], this.sessionTtlSeconds);
  }

  signAssumeRole(organizationId: string, userId: string, permissions: string[]) {
    return this.sign('assume_role', organizationId, userId, permissions, ASSUME_ROLE_TTL_SECONDS);
  }

  private async sign(type: TokenType, org: string, userId: string, permissions: string[], ttl: number) {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({
      typ: type,
      org,
      role: type === 'assume_role' ? 'chat' : undefined,
      permissions,
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(AUDIENCE)
      .setSubject(userId)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + ttl)
      .sign(this.key);
    return { token, expiresAt: new Date((now + ttl) * 1000) };
  }

  async signAppSession(claims: Omit<AppSessionClaims, 'expiresAt'>, ttlSeconds: number) {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({
      typ: 'app',
      org: claims.organizationId,
      art: claims.artifactId,
      ver: claims.versionId,
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(APP_AUDIENCE)
      .setSubject(claims.userId)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(this.key);
    return { token, expiresAt: new Date((now + ttlSeconds) * 1000) };
  }

  async verifyAppSession(token: string): Promise<AppSessionClaims> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        issuer: this.issuer,
        audience: APP_AUDIENCE,
        algorithms: ['HS256'],
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired)
        throw new InvalidTokenError('the app link has expired; open the app again');
      throw new InvalidTokenError('the app link is invalid');
    }
    const { typ, org, art, ver, sub, exp } = payload as JWTPayload & Record<string, unknown>;
    if (
      typ !== 'app' ||
      typeof org !== 'string' ||
      typeof art !== 'string' ||
      typeof ver !== 'string' ||
      typeof sub !== 'string'
    )
      throw new InvalidTokenError('the app link is invalid');
    return {
      organizationId: org,
      userId: sub,
      artifactId: art,
      versionId: ver,
      expiresAt: new Date((exp ?? 0) * 1000),
    };
  }

  async verify(token: string): Promise<TokenClaims> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        issuer: this.issuer,
        audience: AUDIENCE,
        algorithms: ['HS256'],
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new InvalidTokenError('token has expired');
      throw new InvalidTokenError('token signature or claims are invalid');
    }
    const { typ, org, sub, permissions, iat, exp, jti } = payload as JWTPayload & Record<string, unknown>;
    if ((typ !== 'session' && typ !== 'assume_role') || typeof org !== 'string' || typeof sub !== 'string') {
      throw new InvalidTokenError('token claims are invalid');
    }
    return {
      type: typ,
      userId: sub,
      organizationId: org,
      permissions: Array.isArray(permissions)
        ? permissions.filter((p): p is string => typeof p === 'string')
        : [],
      issuedAt: new Date((iat ?? 0) * 1000),
      expiresAt: new Date((exp ?? 0) * 1000),
      tokenId: String(jti ?? ''),
    };
  }
}
