import type { AgentAccess } from '@lib/agents/agent-access';
import type { AgentsService } from '@lib/agents/agents.service';
import type { RequestContext } from '@lib/auth/context';
import { conflict, notFound } from '@lib/errors';
import { AgentKnowledgeBasesService } from '@lib/knowledge-bases/agent-kb.service';
import type { AgentKbAttachmentDoc } from '@lib/knowledge-bases/agent-kb-attachment.schema';
import type { EtlRuleDoc } from '@lib/knowledge-bases/etl-rule.schema';
import type { EtlRuleFields } from '@lib/knowledge-bases/etl-rules.repository';
import { EtlRulesService } from '@lib/knowledge-bases/etl-rules.service';
import { KbAccess } from '@lib/knowledge-bases/kb-access';
import type { KnowledgeBaseDoc } from '@lib/knowledge-bases/knowledge-base.schema';
import type { KbListQuery, PersonalScope } from '@lib/knowledge-bases/knowledge-bases.repository';
import { KnowledgeBasesService } from '@lib/knowledge-bases/knowledge-bases.service';
import type { KnowledgeBasesCrossOrg } from '@lib/knowledge-bases/public-knowledge-bases.repository';
import type { KnowledgeBasesStore } from '@lib/knowledge-bases/store';
import type { TemporalDeps } from '@lib/temporal/client';
import type { Role } from '@lib/users/member.schema';

/*
 * The knowledge-base, ETL-rule and agent-attachment services over in-memory stand-ins of their repositories and
 * ports. The stand-ins follow the documented rules of the real ones (docs/knowledge-bases.md, openapi.yaml and the
 * repositories' doc comments): deleted knowledge bases are invisible, an agent's attachment of one knowledge base
 * is unique (409), rules and attachments list oldest first. They record what the services wrote and started.
 */

export interface Kb {
  organizationId: string;
  knowledgeBaseId: string;
  type: 'ORGANIZATION' | 'PERSONAL';
  title?: string;
  creatorUserId?: string | null;
  agentId?: string | null;
  isPublic?: boolean;
  folder?: string | null;
  deletedAt?: Date | null;
}

export interface Agent {
  organizationId: string;
  agentId: string;
  name: string;
}

export interface Setup {
  kbs?: Kb[];
  agents?: Agent[];
  /** agents each member may use (owner-like callers with agents.all read every agent) */
  agentsOf?: Record<string, string[]>;
  /** action chains of org_1 by id: their inputType */
  chains?: Record<string, string>;
  /** organizations an operator allowed to host public content */
  publishing?: string[];
  /** `<organizationId>:<userId>` → the user's role there */
  roles?: Record<string, Role>;
}

export const MODEL = { id: 'local:all-MiniLM-L6-v2', dimensions: 384 };
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

export interface Start {
  workflow: string;
  workflowId: string;
  args: unknown[];
  taskQueue: string;
  /** the run's search attributes by name (what an operator filters runs by) */
  attributes: Record<string, unknown>;
  fairnessKey?: string;
}

interface StartOptions {
  workflowId: string;
  args: unknown[];
  taskQueue: string;
  typedSearchAttributes: Array<{ key: { name: string }; value: unknown }>;
  priority?: { fairnessKey?: string };
}

export function worldOf(setup: Setup) {
  let tick = 0;
  /** Each write a second after the last: createdAt orders what was written in turn. */
  const now = () => new Date(T0 + ++tick * 1000);
  const kbs = new Map<string, KnowledgeBaseDoc>();
  const key = (org: string, id: string) => `${org}:${id}`;
  for (const k of setup.kbs ?? [])
    kbs.set(key(k.organizationId, k.knowledgeBaseId), {
      _id: key(k.organizationId, k.knowledgeBaseId),
      title: k.knowledgeBaseId,
      llmDescription: '',
      creatorUserId: null,
      agentId: null,
      isPublic: false,
      parseStrategy: 'auto',
      folder: null,
      deletedAt: null,
      embeddingModel: MODEL.id,
      embeddingDimensions: MODEL.dimensions,
      createdAt: now(),
      updatedAt: now(),
      ...k,
    } as unknown as KnowledgeBaseDoc);
  const rules: EtlRuleDoc[] = [];
  const attachments: AgentKbAttachmentDoc[] = [];
  const starts: Start[] = [];
  const listQueries: KbListQuery[] = [];
  /** knowledge bases deleted by someone else between the access check and the write */
  const vanishing = new Set<string>();

  const live = (org: string, id: string) => {
    const k = kbs.get(key(org, id));
    return k && !k.deletedAt ? k : null;
  };
  const readableIn = (k: KnowledgeBaseDoc, includePersonal: boolean, scope?: PersonalScope) =>
    k.type === 'ORGANIZATION' ||
    (includePersonal &&
      (!scope ||
        (k.agentId
          ? (scope.agentIds ?? [k.agentId]).includes(k.agentId)
          : k.creatorUserId === scope.userId)));

  const tenant = (org: string) => ({
    knowledgeBases: {
      get: (id: string) => Promise.resolve(live(org, id)),
      list: (query: KbListQuery) => {
        listQueries.push(query);
        const found = [...kbs.values()].filter(
          (k) =>
            k.organizationId === org && !k.deletedAt && readableIn(k, query.includePersonal, query.personal),
        );
        return Promise.resolve({
          items: found.slice(query.offset, query.offset + query.limit),
          total: found.length,
        });
      },
      create: (id: string, fields: Partial<KnowledgeBaseDoc>) => {
        const at = now();
        const doc = {
          isPublic: false,
          parseStrategy: 'auto',
          folder: null,
          deletedAt: null,
          ...fields,
          _id: key(org, id),
          organizationId: org,
          knowledgeBaseId: id,
          titleSort: fields.title!.toLowerCase(),
          createdAt: at,
          updatedAt: at,
        } as unknown as KnowledgeBaseDoc;
        kbs.set(key(org, id), doc);
        return Promise.resolve(doc);
      },
      findOrCreate: async (id: string, create: () => Promise<KnowledgeBaseDoc>) =>
        kbs.get(key(org, id)) ?? (await create()),
      update: (id: string, set: Partial<KnowledgeBaseDoc>) => {
        const k = live(org, id);
        if (!k || vanishing.has(id)) return Promise.resolve(null);
        Object.assign(k, set, { updatedAt: now() });
        return Promise.resolve({ ...k });
      },
      markDeleted: (id: string) => {
        const k = live(org, id);
        if (!k || vanishing.has(id)) return Promise.resolve(false);
        k.deletedAt = now();
        return Promise.resolve(true);
      },
    },
    etlRules: {
      list: (kbId: string) =>
        Promise.resolve(rules.filter((r) => r.organizationId === org && r.knowledgeBaseId === kbId)),
      get: (kbId: string, etlId: string) =>
        Promise.resolve(
          rules.find((r) => r.organizationId === org && r.knowledgeBaseId === kbId && r._id === etlId) ??
            null,
        ),
      create: (etlId: string, kbId: string, creatorUserId: string, fields: EtlRuleFields) => {
        const at = now();
        const doc = {
          ...fields,
          _id: etlId,
          organizationId: org,
          knowledgeBaseId: kbId,
          creatorUserId,
          createdAt: at,
          updatedAt: at,
        };
        rules.push(doc);
        return Promise.resolve(doc);
      },
      replace: (kbId: string, etlId: string, fields: EtlRuleFields) => {
        const r = rules.find(
          (x) => x.organizationId === org && x.knowledgeBaseId === kbId && x._id === etlId,
        );
        if (!r) return Promise.resolve(null);
        Object.assign(r, fields, { updatedAt: now() });
        return Promise.resolve({ ...r });
      },
      remove: (kbId: string, etlId: string) => {
        const i = rules.findIndex(
          (r) => r.organizationId === org && r.knowledgeBaseId === kbId && r._id === etlId,
        );
        if (i >= 0) rules.splice(i, 1);
        return Promise.resolve(i >= 0);
      },
    },
    agentKnowledgeBases: {
      list: (agentId: string) =>
        Promise.resolve(attachments.filter((a) => a.organizationId === org && a.agentId === agentId)),
      create: (fields: Omit<AgentKbAttachmentDoc, '_id' | 'organizationId' | 'createdAt' | 'updatedAt'>) => {
        const same = (a: AgentKbAttachmentDoc) =>
          a.organizationId === org &&
          a.agentId === fields.agentId &&
          a.kbOrganizationId === fields.kbOrganizationId &&
          a.knowledgeBaseId === fields.knowledgeBaseId;
        if (attachments.some(same))
          return Promise.reject(conflict('this knowledge base is already attached to the agent'));
        const at = now();
        const doc = { ...fields, organizationId: org, createdAt: at, updatedAt: at } as AgentKbAttachmentDoc;
        attachments.push(doc);
        return Promise.resolve(doc);
      },
      remove: (agentId: string, kbId: string) => {
        const before = attachments.length;
        const kept = attachments.filter(
          (a) => !(a.organizationId === org && a.agentId === agentId && a.knowledgeBaseId === kbId),
        );
        attachments.splice(0, attachments.length, ...kept);
        return Promise.resolve(kept.length < before);
      },
      removeForAgent: (agentId: string) => {
        const kept = attachments.filter((a) => !(a.organizationId === org && a.agentId === agentId));
        attachments.splice(0, attachments.length, ...kept);
        return Promise.resolve();
      },
    },
  });

  const publicKnowledgeBases = {
    findPublicKnowledgeBaseCrossOrg: (org: string, id: string) => {
      const k = live(org, id);
      return Promise.resolve(k?.isPublic ? k : null);
    },
  } as unknown as KnowledgeBasesCrossOrg;
  const repos = {
    tenant: (org: string) => tenant(org) as unknown as KnowledgeBasesStore,
    publicKnowledgeBases,
  };

  const agentDoc = (ctx: RequestContext, id: string) =>
    (setup.agents ?? []).find((a) => a.organizationId === ctx.organizationId && a.agentId === id);
  const mayUse = (ctx: RequestContext, id: string) =>
    ctx.capabilities.has('agents.all') || (setup.agentsOf?.[ctx.userId] ?? []).includes(id);
  const agentAccess = {
    accessibleAgentIds: (ctx: RequestContext) => Promise.resolve(setup.agentsOf?.[ctx.userId] ?? []),
    canAccessAgent: (ctx: RequestContext, id: string) => Promise.resolve(mayUse(ctx, id)),
    getAccessibleAgent: (ctx: RequestContext, id: string) => {
      const a = agentDoc(ctx, id);
      return a && mayUse(ctx, id) ? Promise.resolve(a) : Promise.reject(notFound('agent'));
    },
  } as unknown as AgentAccess;
  const agents = {
    readable: (ctx: RequestContext, id: string) => agentAccess.getAccessibleAgent(ctx, id),
    // The route already required agents.manage: the service only finds the agent.
    manageable: (ctx: RequestContext, id: string) => {
      const a = agentDoc(ctx, id);
      return a ? Promise.resolve(a) : Promise.reject(notFound('agent'));
    },
  } as unknown as AgentsService;

  const temporal = {
    taskQueue: 'main',
    client: {
      workflow: {
        start: (workflow: string, options: StartOptions) => {
          starts.push({
            workflow,
            workflowId: options.workflowId,
            args: options.args,
            taskQueue: options.taskQueue,
            attributes: Object.fromEntries(options.typedSearchAttributes.map((p) => [p.key.name, p.value])),
            fairnessKey: options.priority?.fairnessKey,
          });
          return Promise.resolve({});
        },
      },
    },
  } as unknown as TemporalDeps;

  const access = new KbAccess(repos, agentAccess);
  const knowledgeBases = new KnowledgeBasesService(
    repos,
    access,
    agents,
    { hostsPublicContent: (org) => Promise.resolve((setup.publishing ?? []).includes(org)) },
    {
      member: (org, user) =>
        Promise.resolve(setup.roles?.[`${org}:${user}`] ? { role: setup.roles[`${org}:${user}`]! } : null),
    },
    temporal,
    MODEL,
  );
  const chains = {
    chain: (_ctx: { organizationId: string }, id: string) => {
      const inputType = setup.chains?.[id];
      return inputType ? Promise.resolve({ inputType }) : Promise.reject(notFound('action chain'));
    },
  };
  return {
    knowledgeBases,
    etlRules: new EtlRulesService(repos, access, agentAccess, chains),
    agentKnowledgeBases: new AgentKnowledgeBasesService(repos, agents, access),
    /** stored state and what was asked */
    stored: (org: string, id: string) => kbs.get(key(org, id)),
    rules,
    attachments,
    starts,
    listQueries,
    vanishing,
  };
}

/** An AppError's status, code and message (`403 forbidden: …`), or what was returned. */
export async function outcome<T>(promise: Promise<T>): Promise<T | string> {
  try {
    return await promise;
  } catch (err) {
    const e = err as { status?: number; code?: string; message: string };
    if (e.status === undefined) throw err;
    return `${e.status} ${e.code}: ${e.message}`;
  }
}
