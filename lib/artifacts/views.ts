import { iso } from '@lib/db/view';
import type { AppApprovalDoc } from './app-approval.schema';
import type { TableAccess } from './app-manifest';
import type { ArtifactDoc, ArtifactVersionDoc } from './artifact.schema';

export function toVersionView(v: ArtifactVersionDoc) {
  return {
    versionId: v.versionId,
    version: v.version,
    contentType: v.contentType,
    sizeBytes: v.sizeBytes,
    sha256: v.sha256,
    createdBy: v.createdBy,
    agentId: v.agentId ?? null,
    createdAt: iso(v.createdAt),
  };
}

export function currentVersion(a: ArtifactDoc): ArtifactVersionDoc {
  return a.versions.find((v) => v.versionId === a.currentVersionId) ?? a.versions[a.versions.length - 1]!;
}

/** An artifact as the API shows it; `versions` (oldest first) only where one artifact is read. */
export function toArtifactView(a: ArtifactDoc, opts: { approved: boolean; withVersions?: boolean }) {
  return {
    artifactId: a._id,
    organizationId: a.organizationId,
    name: a.name,
    scope: a.scope,
    source: a.source,
    conversationId: a.conversationId ?? null,
    chainRunId: a.chainRunId ?? null,
    actionChainId: a.actionChainId ?? null,
    creatorUserId: a.creatorUserId,
    contentType: a.contentType,
    versionCount: a.versionCount,
    currentVersion: toVersionView(currentVersion(a)),
    currentVersionApproved: opts.approved,
    pinnedAt: iso(a.pinnedAt),
    pinPosition: a.pinPosition ?? null,
    sharedWith: { userIds: a.sharedUserIds, groupIds: a.sharedGroupIds },
    promotedAt: iso(a.promotedAt),
    promotedBy: a.promotedBy ?? null,
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
    ...(opts.withVersions ? { versions: a.versions.map(toVersionView) } : {}),
  };
}
export type ArtifactView = ReturnType<typeof toArtifactView>;

/** ApprovedAppManifest. */
export function toApprovalView(a: AppApprovalDoc) {
  return {
    versionId: a.versionId ?? a._id,
    artifactId: a.artifactId,
    organizationId: a.organizationId,
    manifest: {
      workflows: [...a.manifestWorkflows],
      tables: a.manifestTables.map((t) => ({ table: t.table!, access: t.access as TableAccess })),
    },
    manifestSha256: a.manifestSha256,
    workflowBindings: Object.fromEntries(a.workflowBindings.map((b) => [b.workflow!, b.workflowId!])),
    approvedBy: a.approvedBy,
    approvedAt: iso(a.approvedAt),
  };
}
