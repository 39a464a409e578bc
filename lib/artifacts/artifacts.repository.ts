import type { FilterQuery, SortOrder } from 'mongoose';
import { findOrCreate } from '@lib/db/duplicate-key';
import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import { containsPattern, type PageRequest } from '@lib/paging';
import {
  artifactModel,
  type ArtifactDoc,
  type ArtifactScope,
  type ArtifactSource,
  type ArtifactVersionDoc,
} from './artifact.schema';

export interface NewArtifact {
  name: string;
  scope: ArtifactScope;
  source: ArtifactSource;
  conversationId: string | null;
  chainRunId?: string | null;
  actionChainId?: string | null;
  creatorUserId: string;
  firstVersion: ArtifactVersionDoc;
}

/** Who may see what in a list: everything (managers) or what they made or was shared with them. */
export type ArtifactVisibility = { all: true } | { all: false; userId: string; groupId: string | null };

export interface ArtifactListQuery extends PageRequest {
  visibility: ArtifactVisibility;
  scope?: ArtifactScope;
  conversationId?: string;
  chainRunId?: string;
  pinned?: boolean;
  contentType?: string;
  creatorUserId?: string;
  q?: string;
}

/** Artifacts of one organization; every query is scoped to it. */
export class ArtifactsRepository extends TenantRepository {
  private readonly model = this.db.model(artifactModel);

  /** Creates the artifact under `artifactId`, or returns the one a repeat of the same request made. */
  async create(artifactId: string, fields: NewArtifact): Promise<{ doc: ArtifactDoc; created: boolean }> {
    const { firstVersion, ...rest } = fields;
    return findOrCreate(
      () => this.get(artifactId),
      async () =>
        (
          await this.model.create({
            ...rest,
            _id: artifactId,
            organizationId: this.organizationId,
            nameKey: fields.name.toLowerCase(),
            versions: [firstVersion],
            versionCount: 1,
            currentVersionId: firstVersion.versionId,
            contentType: firstVersion.contentType,
          })
        ).toObject(),
    );
  }

  get(artifactId: string) {
    return this.findOwned(this.model, artifactId);
  }

  list(query: ArtifactListQuery) {
    const filter: FilterQuery<ArtifactDoc> = this.scope<ArtifactDoc>();
    const v = query.visibility;
    if (!v.all) {
      filter.$or = [
        { creatorUserId: v.userId },
        { sharedUserIds: v.userId },
        ...(v.groupId ? [{ sharedGroupIds: v.groupId }] : []),
      ];
    }
    if (query.scope) filter.scope = query.scope;
    if (query.conversationId) filter.conversationId = query.conversationId;
    if (query.chainRunId) filter.chainRunId = query.chainRunId;
    if (query.contentType) filter.contentType = query.contentType;
    if (query.creatorUserId) filter.creatorUserId = query.creatorUserId;
    if (query.q) filter.nameKey = containsPattern(query.q.toLowerCase());
    if (query.pinned !== undefined) filter.pinnedAt = query.pinned ? { $ne: null } : null;
    // Pinned artifacts come in their pin order; everything else most recently changed first.
    const sort: Record<string, SortOrder> = query.pinned
      ? { pinPosition: 1, pinnedAt: 1, _id: 1 }
      : { updatedAt: -1, _id: 1 };
    return findPage(this.model, filter, sort, query);
  }

  /**
   * Appends a version if nobody published one since `artifact` was read (null otherwise: read it again and
   * retry), making it the current version; `set` changes other fields in the same write.
   */
  addVersion(artifact: ArtifactDoc, version: ArtifactVersionDoc, set: Partial<ArtifactDoc> = {}) {
    return this.model
      .findOneAndUpdate(
        this.scope<ArtifactDoc>({ _id: artifact._id, versionCount: artifact.versionCount }),
        {
          $push: { versions: version },
          $inc: { versionCount: 1 },
          $set: { ...set, currentVersionId: version.versionId, contentType: version.contentType },
        },
        { new: true },
      )
      .lean<ArtifactDoc>();
  }

  rename(artifactId: string, name: string) {
    return this.updateOwned(this.model, artifactId, { $set: { name, nameKey: name.toLowerCase() } });
  }

  /** Pins at `position` (after the others); an artifact already pinned keeps its pin and position. */
  async pin(artifactId: string, position: number) {
    await this.model.updateOne(this.scope<ArtifactDoc>({ _id: artifactId, pinnedAt: null }), {
      $set: { pinnedAt: new Date(), pinPosition: position },
    });
    return this.get(artifactId);
  }

  unpin(artifactId: string) {
    return this.updateOwned(this.model, artifactId, { $set: { pinnedAt: null, pinPosition: null } });
  }

  /** The position after the last pinned artifact. */
  async nextPinPosition(): Promise<number> {
    const last = await this.model
      .findOne(this.scope<ArtifactDoc>({ pinnedAt: { $ne: null } }), { pinPosition: 1 })
      .sort({ pinPosition: -1 })
      .lean<Pick<ArtifactDoc, 'pinPosition'>>();
    return (last?.pinPosition ?? -1) + 1;
  }

  /** Sets the position of each listed artifact that is pinned (and, when `creatorUserId` is given, theirs). */
  async setPinPositions(positions: Array<{ artifactId: string; position: number }>, creatorUserId?: string) {
    if (!positions.length) return;
    await this.model.bulkWrite(
      positions.map(({ artifactId, position }) => ({
        updateOne: {
          filter: this.scope<ArtifactDoc>({
            _id: artifactId,
            pinnedAt: { $ne: null },
            ...(creatorUserId ? { creatorUserId } : {}),
          }),
          update: { $set: { pinPosition: position } },
        },
      })),
      { ordered: false },
    );
  }

  share(artifactId: string, sharedUserIds: string[], sharedGroupIds: string[]) {
    return this.updateOwned(this.model, artifactId, { $set: { sharedUserIds, sharedGroupIds } });
  }

  /** Moves a conversation or chain-run artifact to the library (null when it is not one, or not there). */
  promote(artifactId: string, promotedBy: string, name?: string) {
    return this.model
      .findOneAndUpdate(
        this.scope<ArtifactDoc>({ _id: artifactId, scope: { $in: ['conversation', 'chain-run'] } }),
        {
          $set: {
            scope: 'library',
            promotedAt: new Date(),
            promotedBy,
            ...(name ? { name, nameKey: name.toLowerCase() } : {}),
          },
        },
        { new: true },
      )
      .lean<ArtifactDoc>();
  }
}
