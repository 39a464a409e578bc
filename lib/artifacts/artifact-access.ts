import type { AgentAccess } from '@lib/agents/agent-access';
import type { RequestContext } from '@lib/auth/context';
import { forbidden, notFound } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import type { ArtifactDoc } from './artifact.schema';
import type { ArtifactVisibility } from './artifacts.repository';
import type { ArtifactsStore } from './store';

/*
 * Who reaches an artifact:
 *   - read: its creator, members it is shared with (by user, or by their effective user group), and managers
 *     (capability artifacts.manage: admins and owners);
 *   - change (publish, rename, pin, share, promote): its creator and managers.
 * An artifact the caller cannot read is 404, exactly like a missing one; one they read but may not change
 * is 403.
 */
export class ArtifactAccess {
  constructor(
    private readonly repos: Tenants<ArtifactsStore>,
    private readonly agents: Pick<AgentAccess, 'effectiveGroupId'>,
  ) {}

  isManager(ctx: RequestContext): boolean {
    return ctx.capabilities.has('artifacts.manage');
  }

  async visibility(ctx: RequestContext): Promise<ArtifactVisibility> {
    if (this.isManager(ctx)) return { all: true };
    return { all: false, userId: ctx.userId, groupId: await this.agents.effectiveGroupId(ctx) };
  }

  async canRead(ctx: RequestContext, artifact: ArtifactDoc): Promise<boolean> {
    if (this.isManager(ctx) || this.canChange(ctx, artifact)) return true;
    if (artifact.sharedUserIds.includes(ctx.userId)) return true;
    if (!artifact.sharedGroupIds.length) return false;
    const groupId = await this.agents.effectiveGroupId(ctx);
    return groupId !== null && artifact.sharedGroupIds.includes(groupId);
  }

  canChange(ctx: RequestContext, artifact: ArtifactDoc): boolean {
    return this.isManager(ctx) || artifact.creatorUserId === ctx.userId;
  }

  async readable(ctx: RequestContext, artifactId: string): Promise<ArtifactDoc> {
    const artifact = await this.repos.tenant(ctx.organizationId).artifacts.get(artifactId);
    if (!artifact || !(await this.canRead(ctx, artifact))) throw notFound('artifact');
    return artifact;
  }

  async changeable(ctx: RequestContext, artifactId: string): Promise<ArtifactDoc> {
    const artifact = await this.readable(ctx, artifactId);
    if (!this.canChange(ctx, artifact))
      throw forbidden('only the artifact’s creator, an admin or an owner may change it');
    return artifact;
  }
}
