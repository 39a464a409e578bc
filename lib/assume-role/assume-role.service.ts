import type { RequestContext } from '@lib/auth/context';
import { InvalidTokenError, type TokenService } from '@lib/auth/tokens';
import { AppError, forbidden, invalidReference } from '@lib/errors';
import type { Repositories } from '@lib/repositories';

export interface AssumeRoleBody {
  userId: string;
  userEmail?: string;
  userName?: string;
  permissions?: string[];
}

const invalidToken = (message: string) => new AppError(401, 'invalid_token', message);

export class AssumeRoleService {
  constructor(
    private readonly repos: Repositories,
    private readonly tokens: TokenService,
  ) {}

  /**
   * Mints a 2-hour chat token for an end user. `userId` is our user id or the caller's own identifier
   * for the user (stored as sourceId). An unknown user with `userEmail` is created as a chat member.
   */
  async mint(ctx: RequestContext, body: AssumeRoleBody) {
    if (ctx.via === 'api_key' && ctx.apiKeyPermissions?.assume_role?.write !== true) {
      throw forbidden('this API key lacks the assume_role.write permission');
    }
    const members = this.repos.tenant(ctx.organizationId).members;
    let member = await members.findByUserIdOrSourceId(body.userId);
    if (!member) {
      if (!body.userEmail) throw invalidReference('userId', body.userId, ' (pass userEmail to create them)');
      const { user } = await this.repos.accounts.findOrCreate({
        email: body.userEmail,
        name: body.userName ?? body.userEmail.split('@')[0] ?? body.userEmail,
      });
      // The caller's id for the person belongs to this organization's membership, never to the global account.
      // Minted concurrently for the same new user: both requests end with the one membership.
      member = (await members.ensure({ ...user, sourceId: body.userId }, 'chat')).doc;
      if (member.userId !== body.userId && !member.sourceId)
        await members.setSourceIdIfUnset(member.userId, body.userId);
    }
    if (member.role !== 'chat') {
      // The token would receive that member's own live turns: it may act only for chat members.
      throw forbidden(
        `assume-role tokens act for chat members; ${member.userId} is ${member.role === 'admin' ? 'an admin' : 'an owner'}`,
      );
    }
    const { token, expiresAt } = await this.tokens.signAssumeRole(
      ctx.organizationId,
      member.userId,
      body.permissions ?? [],
    );
    return {
      token,
      expiresAt: expiresAt.toISOString(),
      userId: member.userId,
      organizationId: ctx.organizationId,
      role: 'chat' as const,
    };
  }

  async verify(organizationId: string, token: string) {
    let claims;
    try {
      claims = await this.tokens.verify(token);
    } catch (err) {
      if (err instanceof InvalidTokenError) throw invalidToken(err.message);
      throw err;
    }
    if (claims.type !== 'assume_role') throw invalidToken('not an assume-role token');
    if (claims.organizationId !== organizationId)
      throw invalidToken('token was issued for another organization');
    return {
      valid: true as const,
      userId: claims.userId,
      organizationId: claims.organizationId,
      role: 'chat' as const,
      permissions: claims.permissions,
      issuedAt: claims.issuedAt.toISOString(),
      expiresAt: claims.expiresAt.toISOString(),
    };
  }
}
