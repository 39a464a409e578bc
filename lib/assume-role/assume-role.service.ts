import type { RequestContext } from '@lib/auth/context';
import { InvalidTokenError, type TokenService } from '@lib/auth/tokens';
import { AppError, forbidden, invalidReference } from '@lib/errors';
import type { MemberDoc } from '@lib/users/member.schema';

export interface AssumeRoleBody {
  userId: string;
  userEmail?: string;
  userName?: string;
  permissions?: string[];
}

/** The memberships tokens act for: the users feature (wired in lib/services.ts). */
export interface ChatMembers {
  findByUserIdOrSourceId(organizationId: string, id: string): Promise<MemberDoc | null>;
  /** Creates the account and the chat membership as needed, recording `sourceId` as the caller's id for them. */
  addChatMember(
    organizationId: string,
    account: { email: string; name: string },
    sourceId: string,
  ): Promise<MemberDoc>;
}

const invalidToken = (message: string) => new AppError(401, 'invalid_token', message);

export class AssumeRoleService {
  constructor(
    private readonly members: ChatMembers,
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
    let member = await this.members.findByUserIdOrSourceId(ctx.organizationId, body.userId);
    if (!member) {
      if (!body.userEmail) throw invalidReference('userId', body.userId, ' (pass userEmail to create them)');
      member = await this.members.addChatMember(
        ctx.organizationId,
        { email: body.userEmail, name: body.userName ?? body.userEmail.split('@')[0] ?? body.userEmail },
        body.userId,
      );
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
