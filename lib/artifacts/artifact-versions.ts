import { AppError, conflict, invalidReference, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { ObjectTooLarge, type ObjectStore } from '@lib/knowledge-bases/object-store';
import type { Tenants } from '@lib/db/tenants';
import type { ArtifactDoc, ArtifactVersionDoc } from './artifact.schema';
import {
  decodeContent,
  sha256Hex,
  versionKey,
  type ContentInput,
  type VersionContent,
} from './artifact-content';
import type { NewArtifact } from './artifacts.repository';
import type { ArtifactsStore } from './store';
import { currentVersion } from './views';

/** At most this many versions per artifact (the record keeps them all, in order). */
export const MAX_VERSIONS = 500;
/** Publishing retries this often when other publishes of the same artifact win the race. */
const PUBLISH_ATTEMPTS = 5;

/** Who wrote a version. */
export interface VersionAuthor {
  createdBy: string;
  agentId?: string | null;
}

/**
 * Writing and reading artifact versions: the bytes go to S3 first, then the record points at them, so a
 * version never names bytes that are not there. Versions are immutable.
 */
export class ArtifactVersions {
  constructor(
    private readonly repos: Tenants<ArtifactsStore>,
    private readonly objects: ObjectStore,
    readonly maxBytes: number,
  ) {}

  decode(input: ContentInput): VersionContent {
    return decodeContent(input, this.maxBytes);
  }

  private async store(
    organizationId: string,
    artifactId: string,
    versionId: string,
    content: VersionContent,
    by: VersionAuthor,
    version: number,
  ): Promise<ArtifactVersionDoc> {
    const key = versionKey(organizationId, artifactId, versionId);
    await this.objects.put(key, content.bytes, content.contentType);
    return {
      versionId,
      version,
      contentType: content.contentType,
      sizeBytes: content.sizeBytes,
      sha256: content.sha256,
      key,
      createdBy: by.createdBy,
      agentId: by.agentId ?? null,
      createdAt: new Date(),
    };
  }

  /** A new artifact with its first version; a repeat with the same ids returns what the first call made. */
  async create(
    organizationId: string,
    ids: { artifactId: string; versionId: string },
    fields: Omit<NewArtifact, 'firstVersion'>,
    content: VersionContent,
    by: VersionAuthor,
  ) {
    const repo = this.repos.tenant(organizationId).artifacts;
    const existing = await repo.get(ids.artifactId);
    if (existing) return { doc: existing, created: false };
    const firstVersion = await this.store(organizationId, ids.artifactId, ids.versionId, content, by, 1);
    return repo.create(ids.artifactId, { ...fields, firstVersion });
  }

  /**
   * Publishes a new current version (`versionId` makes a repeat of the same request a no-op). `set` changes
   * other fields in the same write. A new version starts unapproved: approval belongs to a versionId.
   */
  async append(
    organizationId: string,
    artifactId: string,
    content: VersionContent,
    by: VersionAuthor,
    opts: { versionId?: string; set?: Partial<ArtifactDoc> } = {},
  ): Promise<ArtifactDoc> {
    const repo = this.repos.tenant(organizationId).artifacts;
    const versionId = opts.versionId ?? newId('ver');
    let stored: ArtifactVersionDoc | undefined;
    for (let attempt = 0; attempt < PUBLISH_ATTEMPTS; attempt++) {
      const artifact = await repo.get(artifactId);
      if (!artifact) throw notFound('artifact');
      if (artifact.versions.some((v) => v.versionId === versionId)) return artifact;
      if (artifact.versionCount >= MAX_VERSIONS)
        throw conflict(`an artifact keeps at most ${MAX_VERSIONS} versions; create a new artifact`);
      stored ??= await this.store(organizationId, artifactId, versionId, content, by, 0);
      const updated = await repo.addVersion(
        artifact,
        { ...stored, version: artifact.versionCount + 1 },
        opts.set,
      );
      if (updated) return updated;
    }
    throw conflict('the artifact is being changed by other requests at the same time; try again');
  }

  /** The version `versionId` of the artifact (always named in a body or query), or its current version. */
  find(artifact: ArtifactDoc, versionId?: string): ArtifactVersionDoc {
    if (versionId === undefined) return currentVersion(artifact);
    const version = artifact.versions.find((v) => v.versionId === versionId);
    if (!version) throw invalidReference('versionId', versionId);
    return version;
  }

  /** A version's bytes, checked against its recorded size and SHA-256. */
  async read(version: ArtifactVersionDoc): Promise<Buffer> {
    let bytes: Uint8Array;
    try {
      bytes = await this.objects.read(version.key, version.sizeBytes);
    } catch (err) {
      const missing = (err as { name?: string }).name === 'NoSuchKey';
      if (!(err instanceof ObjectTooLarge) && !missing) throw err;
      bytes = new Uint8Array();
    }
    if (bytes.length !== version.sizeBytes || sha256Hex(bytes) !== version.sha256) {
      throw new AppError(
        409,
        'artifact_content_mismatch',
        `the stored bytes of version ${version.version} no longer match its sha256; publish the content again`,
      );
    }
    return Buffer.from(bytes);
  }
}
