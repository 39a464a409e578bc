/* eslint-disable @typescript-eslint/require-await -- in-memory stand-ins of asynchronous stores answer at once */
import type { RequestContext } from '@lib/auth/context';
import { ROLE_CAPABILITIES } from '@lib/auth/roles';
import { TokenService } from '@lib/auth/tokens';
import type { AppApprovalsRepository } from '@lib/artifacts/app-approvals.repository';
import { AppManifestsService } from '@lib/artifacts/app-manifests.service';
import { AppRuntimeService } from '@lib/artifacts/app-runtime.service';
import { ArtifactAccess } from '@lib/artifacts/artifact-access';
import type { AppApprovalDoc } from '@lib/artifacts/app-approval.schema';
import type { ArtifactDoc } from '@lib/artifacts/artifact.schema';
import { ArtifactVersions } from '@lib/artifacts/artifact-versions';
import type { ArtifactsRepository } from '@lib/artifacts/artifacts.repository';
import { ArtifactsService } from '@lib/artifacts/artifacts.service';
import type { ArtifactsStore } from '@lib/artifacts/store';
import { ToolArtifactsService } from '@lib/artifacts/tool-artifacts.service';
import type { WorkflowCatalog, WorkflowStartRequest } from '@lib/artifacts/workflow-catalog';
import type { ObjectStore } from '@lib/knowledge-bases/object-store';
import type { TablesService } from '@lib/tables/tables.service';
import type { Role } from '@lib/users/member.schema';
import { FakeApprovals, FakeArtifacts, FakeObjects } from './artifacts-fakes';

/*
 * The artifacts feature's services over in-memory stand-ins (artifacts-fakes.ts) of its repositories, S3 and
 * the ports it takes: group membership, share targets, knowledge-base files, conversations and chain runs,
 * tables and the workflow catalog. Every member is in the group `effectiveGroups` names, else in `grp_default`.
 */

export const ORG = 'org_a';
export const OTHER_ORG = 'org_b';

export function ctxOf(role: Role, userId: string, organizationId = ORG): RequestContext {
  return { organizationId, userId, role, capabilities: ROLE_CAPABILITIES[role], via: 'session' };
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
