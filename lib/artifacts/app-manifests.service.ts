import type { RequestContext } from '@lib/auth/context';
import { AppError } from '@lib/errors';
import type { TablesService } from '@lib/tables/tables.service';
import type { Tenants } from '@lib/db/tenants';
import type { ArtifactAccess } from './artifact-access';
import { isHtml } from './artifact-content';
import type { ArtifactDoc, ArtifactVersionDoc } from './artifact.schema';
import type { ArtifactVersions } from './artifact-versions';
import { extractManifest, MANIFEST_FILE, type DeclaredManifest } from './app-manifest';
import type { ArtifactsStore } from './store';
import { toApprovalView } from './views';
import type { WorkflowCatalog } from './workflow-catalog';

const NOT_AN_APP: DeclaredManifest = {
  declared: null,
  declaredSha256: null,
  declaredError: null,
  problem: null,
};

/**
 * App manifests: what a version's HTML declares (read from its bytes on every call, never stored or taken
 * from a request) and the admin's approval of it, one per version.
 */
export class AppManifestsService {
  constructor(
    private readonly repos: Tenants<ArtifactsStore>,
    private readonly access: ArtifactAccess,
    private readonly versions: ArtifactVersions,
    private readonly workflows: WorkflowCatalog,
    private readonly tables: Pick<TablesService, 'exists'>,
  ) {}

  /** The manifest a version's bytes declare (none for a version that is not HTML). */
  async declaredBy(version: ArtifactVersionDoc): Promise<DeclaredManifest> {
    if (!isHtml(version.contentType)) return NOT_AN_APP;
    return extractManifest((await this.versions.read(version)).toString('utf8'));
  }

  private async approvalOf(organizationId: string, artifactId: string, version: ArtifactVersionDoc) {
    const approval = await this.repos
      .tenant(organizationId)
      .appApprovals.get({ artifactId, versionId: version.versionId });
    return approval ? toApprovalView(approval) : null;
  }

  async get(ctx: RequestContext, artifactId: string, versionId?: string) {
    const artifact = await this.access.readable(ctx, artifactId);
    const version = this.versions.find(artifact, versionId);
    const { declared, declaredSha256, declaredError } = await this.declaredBy(version);
    return {
      versionId: version.versionId,
      declared,
      declaredSha256,
      declaredError,
      approved: await this.approvalOf(ctx.organizationId, artifact._id, version),
    };
  }

  /**
   * Approves what the version's HTML declares, extracted here: every declared table must exist and every
   * declared workflow exist and be runnable (400 naming what is missing). Returns ApprovedAppManifest.
   */
  async approve(ctx: RequestContext, artifactId: string, versionId?: string) {
    const artifact: ArtifactDoc = await this.access.readable(ctx, artifactId);
    const version = this.versions.find(artifact, versionId);
    const found = await this.declaredBy(version);
    if (found.declaredError) throw new AppError(400, found.declaredError, found.problem);
    if (!found.declared) {
      const why = isHtml(version.contentType)
        ? `its HTML embeds no ${MANIFEST_FILE} (<script type="text/plain" data-file="${MANIFEST_FILE}">)`
        : `it is ${version.contentType}, not an HTML app`;
      throw new AppError(
        400,
        'app_manifest_absent',
        `version ${version.version} declares no app manifest: ${why}`,
      );
    }
    const manifest = found.declared;
    const tenant = this.repos.tenant(ctx.organizationId);
    const tables = await Promise.all(
      manifest.tables.map((t) => this.tables.exists(ctx.organizationId, t.table)),
    );
    const missingTables = manifest.tables.filter((_, i) => !tables[i]).map((t) => t.table);
    const resolved = manifest.workflows.length
      ? await this.workflows.resolve(ctx.organizationId, manifest.workflows)
      : { bindings: [], missing: [], ambiguous: [] };
    const { missing: missingWorkflows, ambiguous: ambiguousWorkflows } = resolved;
    if (missingTables.length || missingWorkflows.length || ambiguousWorkflows.length) {
      const parts = [
        missingTables.length ? `tables that do not exist: ${missingTables.join(', ')}` : '',
        missingWorkflows.length
          ? `workflows that do not exist or cannot run: ${missingWorkflows.join(', ')}`
          : '',
        ambiguousWorkflows.length
          ? `workflow names shared by several workflows (declare their ids): ${ambiguousWorkflows.join(', ')}`
          : '',
      ].filter(Boolean);
      throw new AppError(
        400,
        'app_manifest_unresolved',
        `the manifest cannot be approved; it declares ${parts.join('; ')}`,
        { missingTables, missingWorkflows, ambiguousWorkflows },
      );
    }
    const approval = await tenant.appApprovals.put({
      versionId: version.versionId,
      artifactId: artifact._id,
      manifestWorkflows: manifest.workflows,
      manifestTables: manifest.tables,
      manifestSha256: found.declaredSha256,
      workflowBindings: resolved.bindings,
      approvedBy: ctx.userId,
      approvedAt: new Date(),
    });
    return toApprovalView(approval);
  }
}
