import type { AgentAccess } from '@lib/agents/agent-access';
import type { RequestContext } from '@lib/auth/context';
import type { Capability } from '@lib/auth/roles';
import type { KnowledgeBasesCrossOrg } from '@lib/knowledge-bases/public-knowledge-bases.repository';
import type { Embedder } from '@lib/embeddings/embedder';
import { Embedders } from '@lib/embeddings/embedders';
import { KbAccess } from '@lib/knowledge-bases/kb-access';
import { KbSearchService } from '@lib/knowledge-bases/kb-search.service';
import type { PersonalScope } from '@lib/knowledge-bases/knowledge-bases.repository';
import type { KnowledgeBaseDoc } from '@lib/knowledge-bases/knowledge-base.schema';
import type { KnowledgeBasesStore } from '@lib/knowledge-bases/store';
import type { EmbeddingModelRef, VectorQuery, VectorStore } from '@lib/vectors/vector-store';

/*
 * The knowledge-base search over in-memory stand-ins of its stores and ports: knowledge bases, files, chunks and
 * attachments of several organizations, a vector store whose every vector has a fixed score (whatever the query),
 * and two embedding models. The stand-ins follow the documented rules of the real ones (readable = ORGANIZATION,
 * one's own PERSONAL ones and those of one's agents; public = isPublic and not deleted), not the production code.
 */

export interface Kb {
  organizationId: string;
  knowledgeBaseId: string;
  type: 'ORGANIZATION' | 'PERSONAL';
  creatorUserId?: string;
  agentId?: string;
  isPublic?: boolean;
  deletedAt?: Date;
  embeddingModel?: string;
  title?: string;
}

export interface File {
  _id: string;
  organizationId: string;
  knowledgeBaseId: string;
  fileName: string;
  status?: string;
  generation?: number;
  deletedAt?: Date;
  externalFileUrl?: string;
}

export interface Chunk {
  _id: string;
  organizationId: string;
  generation?: number;
  text: string;
  pages?: string;
}

export interface Vector {
  id: string;
  organizationId: string;
  knowledgeBaseId: string;
  fileId: string;
  chunkId: string;
  score: number;
  model?: string;
}

export interface Attachment {
  organizationId: string;
  agentId: string;
  knowledgeBaseId: string;
  kbOrganizationId: string;
}

export interface World {
  kbs: Kb[];
  files?: File[];
  chunks?: Chunk[];
  vectors?: Vector[];
  attachments?: Attachment[];
  /** agents each member may use */
  agentsOf?: Record<string, string[]>;
  /** replaces the ready file names a knowledge base lookup answers */
  readyNames?: (organizationId: string, knowledgeBaseIds: string[]) => Promise<object[]>;
}

export const LOCAL = 'local:all-MiniLM-L6-v2';
export const OPENAI = 'openai:text-embedding-3-small';

/** A file named `name` (`name.txt` when it has no extension), READY at generation 1, with one chunk and its
 * vector (`fil_<name>`, `chk_<name>`, `vec_<name>`). */
export function indexed(
  organizationId: string,
  knowledgeBaseId: string,
  name: string,
  score: number,
  model = LOCAL,
): { file: File; chunk: Chunk; vector: Vector } {
  return {
    file: {
      _id: `fil_${name}`,
      organizationId,
      knowledgeBaseId,
      fileName: name.includes('.') ? name : `${name}.txt`,
    },
    chunk: { _id: `chk_${name}`, organizationId, text: `text of ${name}` },
    vector: {
      id: `vec_${name}`,
      organizationId,
      knowledgeBaseId,
      fileId: `fil_${name}`,
      chunkId: `chk_${name}`,
      score,
      model,
    },
  };
}

export function worldOf(kbs: Kb[], items: ReturnType<typeof indexed>[], rest: Partial<World> = {}): World {
  return {
    kbs,
    files: items.map((i) => i.file),
    chunks: items.map((i) => i.chunk),
    vectors: items.map((i) => i.vector),
    ...rest,
  };
}

export function member(userId: string, organizationId = 'org_1'): RequestContext {
  return {
    organizationId,
    userId,
    role: 'chat',
    capabilities: new Set<Capability>(['knowledge_bases.use']),
    via: 'session',
  };
}

export function admin(userId: string, organizationId = 'org_1'): RequestContext {
  return {
    ...member(userId, organizationId),
    role: 'admin',
    capabilities: new Set<Capability>(['knowledge_bases.use', 'knowledge_bases.manage']),
  };
}

function asDoc(k: Kb) {
  return {
    agentId: null,
    creatorUserId: null,
    isPublic: false,
    deletedAt: null,
    embeddingModel: LOCAL,
    title: k.knowledgeBaseId,
    ...k,
  } as unknown as KnowledgeBaseDoc;
}

/** The service over `world`, and what its stand-ins were asked. */
export function searchIn(world: World) {
  const asked = {
    embedded: [] as Array<{ model: string; texts: string[] }>,
    queries: [] as Array<{ model: string; organizationId: string; query: VectorQuery }>,
  };
  const live = (k: Kb) => !k.deletedAt;
  const inOrg = <T extends { organizationId: string }>(items: T[] | undefined, org: string) =>
    (items ?? []).filter((i) => i.organizationId === org);

  const tenant = (org: string) => ({
    knowledgeBases: {
      get: (id: string) => {
        const k = inOrg(world.kbs, org).find((x) => x.knowledgeBaseId === id && live(x));
        return Promise.resolve(k ? asDoc(k) : null);
      },
      listReadable: (scope?: PersonalScope) => {
        const readable = (k: Kb) =>
          k.type === 'ORGANIZATION' ||
          !scope ||
          (k.agentId === undefined && k.creatorUserId === scope.userId) ||
          (k.agentId !== undefined && (scope.agentIds === undefined || scope.agentIds.includes(k.agentId)));
        return Promise.resolve(
          inOrg(world.kbs, org)
            .filter((k) => live(k) && readable(k))
            .map(asDoc),
        );
      },
    },
    agentKnowledgeBases: {
      list: (agentId: string) =>
        Promise.resolve(inOrg(world.attachments, org).filter((a) => a.agentId === agentId)),
    },
    kbFiles: {
      readyNames: (ids: string[]) =>
        world.readyNames
          ? world.readyNames(org, ids)
          : Promise.resolve(
              inOrg(world.files, org)
                .filter(
                  (f) => ids.includes(f.knowledgeBaseId) && (f.status ?? 'READY') === 'READY' && !f.deletedAt,
                )
                .map((f) => ({ _id: f._id, fileNameKey: f.fileName.toLowerCase() })),
            ),
      getMany: (ids: string[]) =>
        Promise.resolve(
          inOrg(world.files, org)
            .filter((f) => ids.includes(f._id))
            .map((f) => ({
              status: 'READY',
              generation: 1,
              deletedAt: null,
              externalFileUrl: null,
              key: `kb/${org}/${f.knowledgeBaseId}/${f._id}`,
              ...f,
            })),
        ),
    },
    kbChunks: {
      getMany: (ids: string[]) =>
        Promise.resolve(
          inOrg(world.chunks, org)
            .filter((c) => ids.includes(c._id))
            .map((c) => ({ generation: 1, pages: null, ...c })),
        ),
    },
  });

  const publicKnowledgeBases = {
    findPublicKnowledgeBaseCrossOrg: (org: string, id: string) => {
      const k = inOrg(world.kbs, org).find((x) => x.knowledgeBaseId === id);
      return Promise.resolve(k && k.isPublic && live(k) ? asDoc(k) : null);
    },
    listPublicKnowledgeBasesCrossOrg: (except: string) =>
      Promise.resolve(
        world.kbs.filter((k) => k.organizationId !== except && k.isPublic && live(k)).map(asDoc),
      ),
  } as unknown as KnowledgeBasesCrossOrg;

  const embedder = (id: string): Embedder => ({
    model: { id, dimensions: 2 },
    embed: (texts: string[]) => {
      asked.embedded.push({ model: id, texts });
      return Promise.resolve(texts.map(() => [1, 0]));
    },
  });

  const vectors = {
    query: (model: EmbeddingModelRef, organizationId: string, query: VectorQuery) => {
      asked.queries.push({ model: model.id, organizationId, query });
      const found = (world.vectors ?? [])
        .filter(
          (v) =>
            (v.model ?? LOCAL) === model.id &&
            v.organizationId === organizationId &&
            query.knowledgeBaseIds.includes(v.knowledgeBaseId) &&
            (query.fileIds === undefined || query.fileIds.includes(v.fileId)),
        )
        .sort((a, b) => b.score - a.score)
        .slice(0, query.topK)
        .map((v) => ({
          id: v.id,
          score: v.score,
          metadata: { knowledgeBaseId: v.knowledgeBaseId, fileId: v.fileId, chunkId: v.chunkId },
        }));
      return Promise.resolve(found);
    },
  } as unknown as VectorStore;

  const agents = {
    accessibleAgentIds: (ctx: RequestContext) => Promise.resolve(world.agentsOf?.[ctx.userId] ?? []),
    canAccessAgent: (ctx: RequestContext, agentId: string) =>
      Promise.resolve((world.agentsOf?.[ctx.userId] ?? []).includes(agentId)),
  } as unknown as AgentAccess;

  const repos = {
    tenant: (org: string) => tenant(org) as unknown as KnowledgeBasesStore,
    publicKnowledgeBases,
  };
  const service = new KbSearchService(
    repos,
    new KbAccess(repos, agents),
    new Embedders(embedder(LOCAL), [embedder(OPENAI)]),
    vectors,
  );
  return { service, asked };
}

/** An AppError's status and message, or what was found. */
export async function outcome<T>(promise: Promise<T>): Promise<T | string> {
  try {
    return await promise;
  } catch (err) {
    const e = err as { status?: number; message: string };
    if (e.status === undefined) throw err;
    return `${e.status} ${e.message}`;
  }
}
