import { memberContext } from '@lib/auth/authenticator';
import type { RequestContext } from '@lib/auth/context';
import { InvalidTokenError, type TokenService } from '@lib/auth/tokens';
import { AppError, badRequest, unauthorized } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import type { RowQuery, TablesService } from '@lib/tables/tables.service';
import type { MemberDoc } from '@lib/users/member.schema';
import type { ArtifactAccess } from './artifact-access';
import { isHtml } from './artifact-content';
import type { ArtifactVersions } from './artifact-versions';
import { extractManifest } from './app-manifest';
import { appContentSecurityPolicy, bridgeScript, withBridge } from './app-page';
import type { ArtifactsStore } from './store';
import { toApprovalView } from './views';
import type { WorkflowCatalog } from './workflow-catalog';

export interface AppRuntimeSettings {
  appSessionTtlSeconds: number;
  appFrameAncestors: string;
}

/** An open app: the member running it and the exact version the link was made for. */
export interface AppSession {
  ctx: RequestContext;
  artifactId: string;
  versionId: string;
  token: string;
}

const refused = (status: number, code: string, message: string) => new AppError(status, code, message);

/**
 * Pinned HTML apps at run time: links that open one version in a sandbox, the page with its `window.service`
 * bridge, and the bridge's calls, each allowed only by the approved manifest of the version that is current.
 */
export class AppRuntimeService {
  constructor(
    private readonly repos: Tenants<ArtifactsStore>,
    /** The users feature: an app runs with the rights of the member who opened it, while they are one. */
    private readonly members: { member(organizationId: string, userId: string): Promise<MemberDoc | null> },
    private readonly access: ArtifactAccess,
    private readonly versions: ArtifactVersions,
    private readonly tables: TablesService,
    private readonly workflows: WorkflowCatalog,
    private readonly tokens: TokenService,
    private readonly settings: AppRuntimeSettings,
  ) {}

  private appPath(organizationId: string, artifactId: string) {
    return `/orgs/${encodeURIComponent(organizationId)}/artifacts/${encodeURIComponent(artifactId)}/app`;
  }

  /** A link that opens the current version of a pinned HTML artifact as an app. */
  async open(ctx: RequestContext, artifactId: string, apiBaseUrl: string) {
    const artifact = await this.access.readable(ctx, artifactId);
    if (!artifact.pinnedAt) throw refused(409, 'app_not_pinned', 'pin the artifact to run it as an app');
    if (!isHtml(artifact.contentType))
      throw badRequest(`only HTML artifacts run as apps; this one is ${artifact.contentType}`);
    const versionId = artifact.currentVersionId;
    const { token, expiresAt } = await this.tokens.signAppSession(
      { organizationId: ctx.organizationId, userId: ctx.userId, artifactId, versionId },
      this.settings.appSessionTtlSeconds,
    );
    const approved = await this.repos.tenant(ctx.organizationId).appApprovals.get({ artifactId, versionId });
    return {
      artifactId,
      versionId,
      url: `${apiBaseUrl}${this.appPath(ctx.organizationId, artifactId)}?session=${encodeURIComponent(token)}`,
      expiresAt: expiresAt.toISOString(),
      approved: approved !== null,
    };
  }

  /** The session an app link's token stands for, on the app's own path (any other app or organization: 401). */
  async authenticate(token: string, organizationId: string, artifactId: string): Promise<AppSession> {
    let claims;
    try {
      claims = await this.tokens.verifyAppSession(token);
    } catch (err) {
      if (err instanceof InvalidTokenError) throw unauthorized(err.message);
      throw err;
    }
    if (claims.organizationId !== organizationId || claims.artifactId !== artifactId)
      throw unauthorized('the app link is for another app');
    const member = await this.members.member(organizationId, claims.userId);
    if (!member) throw unauthorized('the member who opened this app is no longer in the organization');
    return { ctx: memberContext(member, 'app'), artifactId, versionId: claims.versionId, token };
  }

  /** The app's page with its bridge, and the policy that sandboxes it. */
  async page(session: AppSession, apiBaseUrl: string) {
    const artifact = await this.access.readable(session.ctx, session.artifactId);
    if (!artifact.pinnedAt) throw refused(409, 'app_not_pinned', 'the app was unpinned');
    const version = this.versions.find(artifact, session.versionId);
    const html = (await this.versions.read(version)).toString('utf8');
    const { declared } = extractManifest(html);
    const script = bridgeScript({
      appApiBase: `${apiBaseUrl}${this.appPath(session.ctx.organizationId, session.artifactId)}`,
      token: session.token,
      manifest: declared,
    });
    return {
      html: withBridge(html, script),
      contentSecurityPolicy: appContentSecurityPolicy(
        new URL(apiBaseUrl).origin,
        this.settings.appFrameAncestors,
      ),
    };
  }

  /** The approval that governs the session's calls; a clear refusal when there is none to rely on. */
  private async approval(session: AppSession) {
    const artifact = await this.access.readable(session.ctx, session.artifactId);
    if (!artifact.pinnedAt) throw refused(409, 'app_not_pinned', 'the app was unpinned');
    if (artifact.currentVersionId !== session.versionId) {
      throw refused(
        409,
        'app_version_changed',
        'a newer version of this app has been published since it was opened; open it again',
      );
    }
    const approval = await this.repos
      .tenant(session.ctx.organizationId)
      .appApprovals.get({ artifactId: session.artifactId, versionId: session.versionId });
    if (!approval) {
      throw refused(
        403,
        'app_not_approved',
        'this version of the app has no approved manifest: an admin must approve it before it can use tables or workflows',
      );
    }
    return toApprovalView(approval);
  }

  private async tableAllowed(session: AppSession, tableName: string, access: 'read' | 'write') {
    const { manifest } = await this.approval(session);
    const declared = manifest.tables.find((t) => t.table === tableName);
    if (!declared)
      throw refused(403, 'app_scope_denied', `the approved manifest does not declare table ${tableName}`);
    // write includes read: an app that adds rows may also show them
    if (access === 'write' && declared.access !== 'write')
      throw refused(
        403,
        'app_scope_denied',
        `the approved manifest declares table ${tableName} for read only`,
      );
  }

  async queryRows(session: AppSession, tableName: string, query: RowQuery) {
    await this.tableAllowed(session, tableName, 'read');
    return this.tables.listRows(session.ctx, tableName, query);
  }

  async insertRows(session: AppSession, tableName: string, rows: unknown[]) {
    await this.tableAllowed(session, tableName, 'write');
    return this.tables.insertRows(session.ctx, tableName, rows);
  }

  /** Starts the workflow the approval bound this declared workflow to. */
  async runWorkflow(
    session: AppSession,
    workflow: string,
    body: { input?: Record<string, unknown>; requestId: string },
  ) {
    const { workflowBindings } = await this.approval(session);
    const workflowId = Object.hasOwn(workflowBindings, workflow) ? workflowBindings[workflow] : undefined;
    if (!workflowId)
      throw refused(403, 'app_scope_denied', `the approved manifest does not declare workflow ${workflow}`);
    const { runId } = await this.workflows.start({
      organizationId: session.ctx.organizationId,
      workflowId,
      input: body.input ?? {},
      userId: session.ctx.userId,
      requestId: body.requestId,
      trigger: { type: 'app', artifactId: session.artifactId, versionId: session.versionId },
    });
    return { workflow, workflowId, runId, requestId: body.requestId };
  }
}
