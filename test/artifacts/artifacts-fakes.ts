/* eslint-disable @typescript-eslint/require-await -- in-memory stand-ins of asynchronous stores answer at once */
import type { AppApprovalDoc } from '@lib/artifacts/app-approval.schema';
import type { NewAppApproval } from '@lib/artifacts/app-approvals.repository';
import type { ArtifactDoc, ArtifactVersionDoc } from '@lib/artifacts/artifact.schema';
import type { ArtifactListQuery, NewArtifact } from '@lib/artifacts/artifacts.repository';
import { ObjectTooLarge } from '@lib/knowledge-bases/object-store';

/*
 * In-memory stand-ins of the artifacts feature's repositories and of S3, following the documented contracts of
 * artifacts.repository.ts and app-approvals.repository.ts (tenant-scoped reads, the versionCount check of
 * addVersion, pin only when unpinned, promote only conversation / chain-run artifacts, approvals keyed
 * `<artifactId>/<versionId>` with legacy versionId-only ids), not the production services under test.
 */

const copy = <T>(v: T): T => structuredClone(v);

export class FakeArtifacts {
  /** Called before each addVersion: a test lets another publish win the race here. */
  beforeAddVersion?: (artifactId: string) => void;
  constructor(
    private readonly all: Map<string, ArtifactDoc>,
    private readonly organizationId: string,
    private readonly tick: () => Date,
  ) {}

  private own(id: string) {
    const doc = this.all.get(id);
    return doc && doc.organizationId === this.organizationId ? doc : undefined;
  }
  private change(id: string, fields: Partial<ArtifactDoc>) {
    const doc = this.own(id);
    if (!doc) return null;
    Object.assign(doc, fields, { updatedAt: this.tick() });
    return copy(doc);
  }

  async create(artifactId: string, fields: NewArtifact) {
    const existing = this.own(artifactId);
    if (existing) return { doc: copy(existing), created: false };
    const { firstVersion, ...rest } = fields;
    const now = this.tick();
    const doc = {
      chainRunId: null,
      actionChainId: null,
      ...rest,
      _id: artifactId,
      organizationId: this.organizationId,
      nameKey: fields.name.toLowerCase(),
      versions: [firstVersion],
      versionCount: 1,
      currentVersionId: firstVersion.versionId,
      contentType: firstVersion.contentType,
      pinnedAt: null,
      pinPosition: null,
      sharedUserIds: [],
      sharedGroupIds: [],
      promotedAt: null,
      promotedBy: null,
      createdAt: now,
      updatedAt: now,
    } as unknown as ArtifactDoc;
    this.all.set(artifactId, doc);
    return { doc: copy(doc), created: true };
  }

  async get(artifactId: string) {
    const doc = this.own(artifactId);
    return doc ? copy(doc) : null;
  }

  async list(q: ArtifactListQuery) {
    const v = q.visibility;
    const found = [...this.all.values()].filter(
      (a) =>
        a.organizationId === this.organizationId &&
        (v.all ||
          a.creatorUserId === v.userId ||
          a.sharedUserIds.includes(v.userId) ||
          (v.groupId !== null && a.sharedGroupIds.includes(v.groupId))) &&
        (!q.scope || a.scope === q.scope) &&
        (!q.conversationId || a.conversationId === q.conversationId) &&
        (!q.chainRunId || a.chainRunId === q.chainRunId) &&
        (!q.contentType || a.contentType === q.contentType) &&
        (!q.creatorUserId || a.creatorUserId === q.creatorUserId) &&
        (!q.q || a.nameKey.includes(q.q.toLowerCase())) &&
        (q.pinned === undefined || (a.pinnedAt !== null) === q.pinned),
    );
    found.sort((a, b) =>
      q.pinned
        ? a.pinPosition! - b.pinPosition! ||
          a.pinnedAt!.getTime() - b.pinnedAt!.getTime() ||
          a._id.localeCompare(b._id)
        : b.updatedAt.getTime() - a.updatedAt.getTime() || a._id.localeCompare(b._id),
    );
    return { items: copy(found.slice(q.offset, q.offset + q.limit)), total: found.length };
  }

  async addVersion(artifact: ArtifactDoc, version: ArtifactVersionDoc, set: Partial<ArtifactDoc> = {}) {
    this.beforeAddVersion?.(artifact._id);
    const doc = this.own(artifact._id);
    if (!doc || doc.versionCount !== artifact.versionCount) return null;
    doc.versions.push(copy(version));
    return this.change(artifact._id, {
      ...set,
      versionCount: doc.versionCount + 1,
      currentVersionId: version.versionId,
      contentType: version.contentType,
    });
  }

  async rename(artifactId: string, name: string) {
    return this.change(artifactId, { name, nameKey: name.toLowerCase() });
  }
  async pin(artifactId: string, position: number) {
    if (this.own(artifactId)?.pinnedAt === null)
      this.change(artifactId, { pinnedAt: this.tick(), pinPosition: position });
    return this.get(artifactId);
  }
  async unpin(artifactId: string) {
    return this.change(artifactId, { pinnedAt: null, pinPosition: null });
  }
  async nextPinPosition() {
    const pinned = [...this.all.values()].filter(
      (a) => a.organizationId === this.organizationId && a.pinnedAt,
    );
    return Math.max(-1, ...pinned.map((a) => a.pinPosition!)) + 1;
  }
  async setPinPositions(positions: Array<{ artifactId: string; position: number }>, creatorUserId?: string) {
    for (const { artifactId, position } of positions) {
      // the real update names each artifact by id; one without would match any pinned artifact
      if (typeof artifactId !== 'string' || typeof position !== 'number')
        throw new Error('a position needs an id');
      const doc = this.own(artifactId);
      if (doc?.pinnedAt && (!creatorUserId || doc.creatorUserId === creatorUserId))
        doc.pinPosition = position;
    }
  }
  async share(artifactId: string, sharedUserIds: string[], sharedGroupIds: string[]) {
    return this.change(artifactId, { sharedUserIds, sharedGroupIds });
  }
  async promote(artifactId: string, promotedBy: string, name?: string) {
    const doc = this.own(artifactId);
    if (!doc || doc.scope === 'library') return null;
    return this.change(artifactId, {
      scope: 'library',
      promotedAt: this.tick(),
      promotedBy,
      ...(name ? { name, nameKey: name.toLowerCase() } : {}),
    });
  }
}

export class FakeApprovals {
  constructor(
    readonly all: Map<string, AppApprovalDoc>,
    private readonly organizationId: string,
  ) {}
  private own(id: string) {
    const doc = this.all.get(id);
    return doc && doc.organizationId === this.organizationId ? copy(doc) : null;
  }
  async get(ref: { artifactId: string; versionId: string }) {
    const found = this.own(`${ref.artifactId}/${ref.versionId}`);
    if (found) return found;
    const legacy = this.own(ref.versionId);
    return legacy?.artifactId === ref.artifactId ? legacy : null;
  }
  async put(approval: NewAppApproval) {
    const _id = `${approval.artifactId}/${approval.versionId}`;
    this.all.set(_id, copy({ ...approval, _id, organizationId: this.organizationId }));
    return this.own(_id)!;
  }
  async approvedAmong(refs: Array<{ artifactId: string; versionId: string }>) {
    const ids = new Set<string>();
    for (const ref of refs) if (await this.get(ref)) ids.add(ref.artifactId);
    return ids;
  }
}

/** S3 as a map; a missing key reads as S3's NoSuchKey. */
export class FakeObjects {
  readonly bytes = new Map<string, Buffer>();
  readonly links: Array<{ key: string; fileName: string; opts: object }> = [];
  readonly puts: Array<{ key: string; contentType: string }> = [];
  readonly reads: Array<{ key: string; maxBytes: number }> = [];
  async put(key: string, bytes: Uint8Array, contentType: string) {
    this.puts.push({ key, contentType });
    this.bytes.set(key, Buffer.from(bytes));
  }
  async read(key: string, maxBytes: number) {
    this.reads.push({ key, maxBytes });
    const found = this.bytes.get(key);
    if (!found) throw Object.assign(new Error('missing'), { name: 'NoSuchKey' });
    if (found.length > maxBytes) throw new ObjectTooLarge('too large');
    return new Uint8Array(found);
  }
  async downloadUrl(key: string, fileName: string, opts: object) {
    this.links.push({ key, fileName, opts });
    return `https://s3.test/${key}?as=${fileName}`;
  }
}
