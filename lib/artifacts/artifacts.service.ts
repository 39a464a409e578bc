import type { RequestContext } from '@lib/auth/context';
import { AppError, badRequest, conflict } from '@lib/errors';
import { newId } from '@lib/ids';
import type { KbFilesService } from '@lib/knowledge-bases/kb-files.service';
import type { ObjectStore } from '@lib/knowledge-bases/object-store';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { ArtifactAccess } from './artifact-access';
import { checkName, fileNameFor, isHtml, type ContentInput } from './artifact-content';
import type { ArtifactDoc, ArtifactScope } from './artifact.schema';
import type { ArtifactVersions } from './artifact-versions';
import type { ArtifactsStore } from './store';
import { toArtifactView } from './views';

/** How long an artifact download link is valid. */
export const ARTIFACT_DOWNLOAD_SECONDS = 3600;

export interface ArtifactListFilters extends PageRequest {
  scope?: ArtifactScope;
  conversationId?: string;
  chainRunId?: string;
  pinned?: boolean;
  contentType?: string;
  creatorUserId?: string;
  q?: string;
}

/** Whom an artifact is shared with, as the users and groups features know them. */
export interface ShareTargets {
  member(organizationId: string, userId: string): Promise<object | null>;
  groupExists(organizationId: string, groupId: string): Promise<boolean>;
}

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

/** Artifacts as members use them through the API: the library, versions, pins, sharing, transfers. */
export class ArtifactsService {
  constructor(
    private readonly repos: Tenants<ArtifactsStore>,
    private readonly access: ArtifactAccess,
    private readonly versions: ArtifactVersions,
    private readonly objects: ObjectStore,
    private readonly kbFiles: Pick<KbFilesService, 'createFromObject'>,
    private readonly shareTargets: ShareTargets,
  ) {}

  private repo(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).artifacts;
  }

  /** `{ artifact }` with whether its current version's manifest is approved. */
  private async wrap(ctx: RequestContext, artifact: ArtifactDoc, withVersions = false) {
    const approved = await this.repos
      .tenant(ctx.organizationId)
      .appApprovals.approvedAmong([{ artifactId: artifact._id, versionId: artifact.currentVersionId }]);
    return {
      artifact: toArtifactView(artifact, {
        approved: approved.has(artifact._id),
        withVersions,
      }),
    };
  }

  /** A new artifact in the organization's library with its first version. */
  async upload(ctx: RequestContext, body: ContentInput & { name: string }) {
    const name = checkName(body.name);
    const content = this.versions.decode(body);
    const { doc } = await this.versions.create(
      ctx.organizationId,
      { artifactId: newId('art'), versionId: newId('ver') },
      { name, scope: 'library', source: 'upload', conversationId: null, creatorUserId: ctx.userId },
      content,
      { createdBy: ctx.userId },
    );
    return this.wrap(ctx, doc, true);
  }

  /** A new current version (unapproved until approved itself). */
  async publish(ctx: RequestContext, artifactId: string, body: ContentInput) {
    await this.access.changeable(ctx, artifactId);
    const content = this.versions.decode(body);
    const updated = await this.versions.append(ctx.organizationId, artifactId, content, {
      createdBy: ctx.userId,
    });
    return this.wrap(ctx, updated, true);
  }

  async list(ctx: RequestContext, filters: ArtifactListFilters) {
    const visibility = await this.access.visibility(ctx);
    const { items, total } = await this.repo(ctx).list({ ...filters, visibility });
    const approved = await this.repos
      .tenant(ctx.organizationId)
      .appApprovals.approvedAmong(items.map((a) => ({ artifactId: a._id, versionId: a.currentVersionId })));
    return page(
      items.map((a) => toArtifactView(a, { approved: approved.has(a._id) })),
      total,
      filters.offset,
    );
  }

  async get(ctx: RequestContext, artifactId: string) {
    return this.wrap(ctx, await this.access.readable(ctx, artifactId), true);
  }

  /** Only the display name changes. */
  async rename(ctx: RequestContext, artifactId: string, rawName: string) {
    const name = checkName(rawName);
    await this.access.changeable(ctx, artifactId);
    const updated = await this.repo(ctx).rename(artifactId, name);
    return this.wrap(ctx, updated ?? (await this.access.readable(ctx, artifactId)));
  }

  /** Pins an HTML artifact after the others; approval is untouched; pinning a pinned one changes nothing. */
  async pin(ctx: RequestContext, artifactId: string) {
    const artifact = await this.access.changeable(ctx, artifactId);
    if (!isHtml(artifact.contentType))
      throw badRequest(`only HTML artifacts can be pinned; this one is ${artifact.contentType}`);
    if (artifact.pinnedAt) return this.wrap(ctx, artifact);
    const position = await this.repo(ctx).nextPinPosition();
    const pinned = await this.repo(ctx).pin(artifactId, position);
    return this.wrap(ctx, pinned ?? artifact);
  }

  /** The artifact and its versions stay; only the pin goes. */
  async unpin(ctx: RequestContext, artifactId: string) {
    await this.access.changeable(ctx, artifactId);
    await this.repo(ctx).unpin(artifactId);
    return { success: true as const };
  }

  /**
   * Each listed artifact gets its index as position. Ids that are not pinned, not of this organization, or
   * (for members other than admins and owners) not the caller's own are ignored.
   */
  async reorderPins(ctx: RequestContext, orderedArtifactIds: string[]) {
    const seen = new Set<string>();
    const positions = orderedArtifactIds.flatMap((artifactId, position) => {
      if (seen.has(artifactId)) return [];
      seen.add(artifactId);
      return [{ artifactId, position }];
    });
    const onlyOwn = this.access.isManager(ctx) ? undefined : ctx.userId;
    await this.repo(ctx).setPinPositions(positions, onlyOwn);
    return { success: true as const };
  }

  /** Replaces who the artifact is shared with: members of the organization, and its user groups. */
  async share(ctx: RequestContext, artifactId: string, body: { userIds?: string[]; groupIds?: string[] }) {
    await this.access.changeable(ctx, artifactId);
    const { organizationId } = ctx;
    const userIds = [...new Set(body.userIds ?? [])];
    const groupIds = [...new Set(body.groupIds ?? [])];
    const [members, groups] = await Promise.all([
      Promise.all(userIds.map((id) => this.shareTargets.member(organizationId, id))),
      Promise.all(groupIds.map((id) => this.shareTargets.groupExists(organizationId, id))),
    ]);
    const unknownUsers = userIds.filter((_, i) => !members[i]);
    const unknownGroups = groupIds.filter((_, i) => !groups[i]);
    if (unknownUsers.length || unknownGroups.length) {
      const parts = [
        unknownUsers.length ? `userIds: ${unknownUsers.join(', ')} are not members of this organization` : '',
        unknownGroups.length ? `groupIds: ${unknownGroups.join(', ')} do not exist` : '',
      ].filter(Boolean);
      throw new AppError(400, 'invalid_reference', parts.join('; '), { unknownUsers, unknownGroups });
    }
    const updated = await this.repo(ctx).share(artifactId, userIds, groupIds);
    return this.wrap(ctx, updated ?? (await this.access.readable(ctx, artifactId)));
  }

  /** A conversation or chain-run artifact joins the organization's library (same id, versions and approvals). */
  async promote(ctx: RequestContext, artifactId: string, body: { name?: string }) {
    const name = body.name === undefined ? undefined : checkName(body.name);
    const artifact = await this.access.changeable(ctx, artifactId);
    if (artifact.scope === 'library') throw conflict('the artifact is already in the library');
    const promoted = await this.repo(ctx).promote(artifactId, ctx.userId, name);
    if (!promoted) throw conflict('the artifact is already in the library');
    return this.wrap(ctx, promoted);
  }

  /** A signed URL that downloads one version's bytes (the current one by default). */
  async downloadLink(ctx: RequestContext, artifactId: string, versionId?: string) {
    const artifact = await this.access.readable(ctx, artifactId);
    const version = this.versions.find(artifact, versionId);
    const downloadLink = await this.objects.downloadUrl(
      version.key,
      fileNameFor(artifact.name, version.contentType),
      { expiresIn: ARTIFACT_DOWNLOAD_SECONDS, contentType: version.contentType },
    );
    return {
      artifactId,
      versionId: version.versionId,
      downloadLink,
      expiresAt: inSeconds(ARTIFACT_DOWNLOAD_SECONDS),
    };
  }

  /** One version becomes a file of a knowledge base, ingested like any upload. */
  async sendToKnowledgeBase(
    ctx: RequestContext,
    artifactId: string,
    body: { knowledgeBaseId: string; versionId?: string; fileName?: string },
  ) {
    const artifact = await this.access.readable(ctx, artifactId);
    const version = this.versions.find(artifact, body.versionId);
    const fileName = body.fileName?.trim() || fileNameFor(artifact.name, version.contentType);
    return this.kbFiles.createFromObject(ctx, body.knowledgeBaseId, {
      fileName,
      contentType: version.contentType,
      key: version.key,
      sizeBytes: version.sizeBytes,
    });
  }
}
