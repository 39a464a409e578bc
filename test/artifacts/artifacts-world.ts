/* eslint-disable @typescript-eslint/require-await -- in-memory stand-ins of asynchronous stores answer at once */
import type { RequestContext } from '@lib/auth/context';
import { ROLE_CAPABILITIES } from '@lib/auth/roles';
import { TokenService } from '@lib/auth/tokens';
import type { AppApprovalDoc } from '@lib/artifacts/app-approval.schema';
import type { AppApprovalsRepository, NewAppApproval } from '@lib/artifacts/app-approvals.repository';
import { AppManifestsService } from '@lib/artifacts/app-manifests.service';
import { AppRuntimeService } from '@lib/artifacts/app-runtime.service';
import { ArtifactAccess } from '@lib/artifacts/artifact-access';
import type { ArtifactDoc, ArtifactVersionDoc } from '@lib/artifacts/artifact.schema';
import { ArtifactVersions } from '@lib/artifacts/artifact-versions';
import type {
  ArtifactListQuery,
  ArtifactsRepository,
  NewArtifact,
} from '@lib/artifacts/artifacts.repository';
import { ArtifactsService } from '@lib/artifacts/artifacts.service';
import type { ArtifactsStore } from '@lib/artifacts/store';
import { ToolArtifactsService } from '@lib/artifacts/tool-artifacts.service';
import type { WorkflowCatalog, WorkflowStartRequest } from '@lib/artifacts/workflow-catalog';
import { ObjectTooLarge, type ObjectStore } from '@lib/knowledge-bases/object-store';
import type { TablesService } from '@lib/tables/tables.service';
import type { Role } from '@lib/users/member.schema';

/*
 * The artifacts feature over in-memory stand-ins. The repositories follow the documented contracts of
 * artifacts.repository.ts and app-approvals.repository.ts (tenant-scoped reads, the versionCount check of
 * addVersion, pin only when unpinned, promote only conversation / chain-run artifacts, approvals keyed
 * `<artifactId>/<versionId>` with legacy versionId-only ids), not the production services under test.
 * Every member is in the group `effectiveGroups` names, else in `grp_default`.
 */

export const ORG = 'org_a';
export const OTHER_ORG = 'org_b';

export function ctxOf(role: Role, userId: string, organizationId = ORG): RequestContext {
  return { organizationId, userId, role, capabilities: ROLE_CAPABILITIES[role], via: 'session' };
}

const copy = <T>(v: T): T => structuredClone(v);

class FakeArtifacts {
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

class FakeApprovals {
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
  readonly puts: string[] = [];
  readonly reads: Array<{ key: string; maxBytes: number }> = [];
  async put(key: string, bytes: Uint8Array) {
    this.puts.push(key);
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

export interface Chain {
  organizationId: string;
  id: string;
  name: string;
  runnable: boolean;
}

export function artifactsWorld(opts: { maxBytes?: number } = {}) {
  let clock = Date.UTC(2026, 0, 1);
  const tick = () => new Date((clock += 1000));
  const docs = new Map<string, ArtifactDoc>();
  const approvalDocs = new Map<string, AppApprovalDoc>();
  const stores = new Map<string, ArtifactsStore>();
  const repos = {
    tenant(organizationId: string): ArtifactsStore {
      if (!stores.has(organizationId))
        stores.set(organizationId, {
          artifacts: new FakeArtifacts(docs, organizationId, tick) as unknown as ArtifactsRepository,
          appApprovals: new FakeApprovals(approvalDocs, organizationId) as unknown as AppApprovalsRepository,
        });
      return stores.get(organizationId)!;
    },
  };
  const objects = new FakeObjects();
  const effectiveGroups: Record<string, string> = {};
  const groupLookups: string[] = [];
  const agents = {
    async effectiveGroupId(ctx: RequestContext) {
      groupLookups.push(ctx.userId);
      return effectiveGroups[ctx.userId] ?? 'grp_default';
    },
  };
  const access = new ArtifactAccess(repos, agents);
  const versions = new ArtifactVersions(repos, objects as unknown as ObjectStore, opts.maxBytes ?? 1000);
  /** members and groups per organization, for sharing and app sessions */
  const members: Record<string, Record<string, Role>> = { [ORG]: {}, [OTHER_ORG]: {} };
  const groups: Record<string, string[]> = { [ORG]: ['grp_sales', 'grp_default'], [OTHER_ORG]: ['grp_x'] };
  const kbCalls: Array<{ ctx: RequestContext; knowledgeBaseId: string; source: object }> = [];
  const kbFiles = {
    async createFromObject(ctx: RequestContext, knowledgeBaseId: string, source: object) {
      kbCalls.push({ ctx, knowledgeBaseId, source });
      return { fileId: 'file_1', ...source };
    },
  };
  const member = async (organizationId: string, userId: string) => {
    const role = members[organizationId]?.[userId];
    return role ? ({ organizationId, userId, role, userGroupId: null } as never) : null;
  };
  const shareTargets = {
    member,
    groupExists: async (organizationId: string, groupId: string) =>
      (groups[organizationId] ?? []).includes(groupId),
  };
  const artifacts = new ArtifactsService(
    repos,
    access,
    versions,
    objects as never,
    kbFiles as never,
    shareTargets,
  );

  const conversations: Array<[string, string]> = [];
  const runs: Array<{ organizationId: string; _id: string; actionChainId: string }> = [];
  const tools = new ToolArtifactsService(repos, versions, {
    chainRuns: {
      getRun: async (organizationId, runId) =>
        runs.find((r) => r.organizationId === organizationId && r._id === runId) ?? null,
    },
    conversations: {
      exists: async (organizationId, conversationId) =>
        conversations.some(([o, c]) => o === organizationId && c === conversationId),
    },
  });

  const tableNames: Array<[string, string]> = [];
  const tableCalls: Array<{ op: string; userId: string; table: string; arg: unknown }> = [];
  const tables = {
    exists: async (organizationId: string, name: string) =>
      tableNames.some(([o, t]) => o === organizationId && t === name),
    listRows: async (caller: RequestContext, table: string, query: unknown) => {
      tableCalls.push({ op: 'list', userId: caller.userId, table, arg: query });
      return { items: [{ id: 1 }], totalRows: 1, offset: 0 };
    },
    insertRows: async (caller: RequestContext, table: string, rows: unknown[]) => {
      tableCalls.push({ op: 'insert', userId: caller.userId, table, arg: rows });
      return { inserted: rows.length, failed: 0, errors: [], ids: [7] };
    },
  };
  const chains: Chain[] = [];
  const started: WorkflowStartRequest[] = [];
  const resolveCalls: string[][] = [];
  // Follows the WorkflowCatalog contract: an id or the name of exactly one runnable chain binds.
  const workflows: WorkflowCatalog = {
    async resolve(organizationId, refs) {
      resolveCalls.push([...refs]);
      const own = chains.filter((c) => c.organizationId === organizationId);
      const out = {
        bindings: [] as Array<{ workflow: string; workflowId: string }>,
        missing: [] as string[],
        ambiguous: [] as string[],
      };
      for (const ref of refs) {
        const byId = own.find((c) => c.id === ref);
        const byName = own.filter((c) => c.name === ref);
        const chain = byId ?? (byName.length === 1 ? byName[0] : undefined);
        if (!byId && byName.length > 1) out.ambiguous.push(ref);
        else if (!chain || !chain.runnable) out.missing.push(ref);
        else out.bindings.push({ workflow: ref, workflowId: chain.id });
      }
      return out;
    },
    async start(request) {
      started.push(request);
      return { runId: `run_${started.length}` };
    },
  };
  const tokens = new TokenService('unit-test-secret-unit-test-secret', 'unit-test', 3600);
  const manifests = new AppManifestsService(repos, access, versions, workflows, tables);
  const runtime = new AppRuntimeService(
    repos,
    { member },
    access,
    versions,
    tables as unknown as TablesService,
    workflows,
    tokens,
    { appSessionTtlSeconds: 600, appFrameAncestors: "'self'" },
  );
  return {
    repos,
    docs,
    approvalDocs,
    objects,
    effectiveGroups,
    groupLookups,
    members,
    groups,
    kbCalls,
    conversations,
    runs,
    tableNames,
    tableCalls,
    chains,
    started,
    resolveCalls,
    tokens,
    access,
    versions,
    artifacts,
    tools,
    manifests,
    runtime,
    /** the fake artifacts repository of an organization, for its race hook */
    artifactsRepo: (organizationId = ORG) =>
      repos.tenant(organizationId).artifacts as unknown as FakeArtifacts,
  };
}

export type ArtifactsWorld = ReturnType<typeof artifactsWorld>;

/** The AppError a call fails with, as the API would answer it. */
export async function refusal(call: Promise<unknown>) {
  try {
    await call;
  } catch (err) {
    const e = err as { status?: number; code?: string; message: string; details?: unknown };
    return { status: e.status, code: e.code, message: e.message, details: e.details };
  }
  throw new Error('expected a refusal, but the call succeeded');
}
