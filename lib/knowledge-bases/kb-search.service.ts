import type { RequestContext } from '@lib/auth/context';
import { badRequest, invalidReference, referenced } from '@lib/errors';
import { compileGlob } from '@lib/patterns/glob';
import type { KnowledgeBasesCrossOrg } from './public-knowledge-bases.repository';
import type { Tenants } from '@lib/db/tenants';
import type { Embedders } from '@lib/embeddings/embedders';
import type { Embedder } from '@lib/embeddings/embedder';
import type { VectorMatch, VectorStore } from '@lib/vectors/vector-store';
import type { KbAccess } from './kb-access';
import type { KbChunkDoc } from './kb-chunk.schema';
import type { KbFileDoc } from './kb-file.schema';
import type { KnowledgeBaseDoc } from './knowledge-base.schema';
import type { KnowledgeBasesStore } from './store';

/** `cursor + limit` may reach this many hits: deeper pages of a similarity ranking are noise. */
export const MAX_SEARCH_DEPTH = 1000;
/** The spec caps a page of hits at 100: a larger `limit` is served as 100, not refused. */
export const MAX_SEARCH_LIMIT = 100;
/** The most vectors one query asks for, while stale vectors (files not READY) leave a page short. */
export const MAX_SEARCH_FETCH = 4 * MAX_SEARCH_DEPTH;
const MAX_KB_IDS = 50;
/** File names matched against a filePattern between two turns of the event loop. */
const MATCH_CHUNK = 500;

export interface SearchOptions {
  q: string;
  limit: number;
  offset: number;
  filePattern?: string;
}

export interface SearchHit {
  vectorId: string;
  fileId: string;
  fileName: string;
  key: string;
  pages: string | null;
  text: string;
  externalFileUrl: string | null;
  knowledgeBaseId: string;
  organizationId: string;
  score: number;
}

type Scored = VectorMatch & { organizationId: string };

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** Semantic search over knowledge bases: one, every readable one (with public ones of other organizations), or
 * those attached to an agent. Each knowledge base is searched with its own embedding model. */
export class KbSearchService {
  constructor(
    private readonly repos: Tenants<KnowledgeBasesStore> & { publicKnowledgeBases: KnowledgeBasesCrossOrg },
    private readonly access: KbAccess,
    private readonly embedders: Embedders,
    private readonly vectors: VectorStore,
  ) {}

  async searchOne(ctx: RequestContext, knowledgeBaseId: string, opts: SearchOptions) {
    const kb = await this.access.readable(ctx, knowledgeBaseId);
    const { hits } = await this.search([kb], opts);
    return { items: hits };
  }

  async searchAll(ctx: RequestContext, opts: SearchOptions & { kbIds?: string; kbOrgs?: string }) {
    if (opts.kbOrgs !== undefined && !opts.kbIds) throw badRequest('kbOrgs requires kbIds');
    const kbs = opts.kbIds ? await this.named(ctx, opts.kbIds, opts.kbOrgs) : await this.everyReadable(ctx);
    const { hits, total } = await this.search(kbs, opts);
    return { items: hits, totalRows: total, offset: opts.offset };
  }

  /** What an agent's search tool finds in the knowledge bases attached to it. */
  async searchForAgent(organizationId: string, agentId: string, q: string, limit: number) {
    const tenant = this.repos.tenant(organizationId);
    const attachments = await tenant.agentKnowledgeBases.list(agentId);
    const kbs = await Promise.all(
      attachments.map((a) =>
        a.kbOrganizationId === organizationId
          ? tenant.knowledgeBases.get(a.knowledgeBaseId)
          : this.repos.publicKnowledgeBases.findPublicKnowledgeBaseCrossOrg(
              a.kbOrganizationId,
              a.knowledgeBaseId,
            ),
      ),
    );
    const { hits } = await this.search(
      kbs.filter((kb): kb is KnowledgeBaseDoc => kb !== null),
      { q, limit, offset: 0 },
    );
    return hits;
  }

  /** What a chain step's search tool finds in the knowledge bases of its organization attached to it. */
  async searchForStep(organizationId: string, knowledgeBaseIds: string[], q: string, limit: number) {
    const tenant = this.repos.tenant(organizationId);
    const kbs = await Promise.all(knowledgeBaseIds.map((id) => tenant.knowledgeBases.get(id)));
    const { hits } = await this.search(
      kbs.filter((kb): kb is KnowledgeBaseDoc => kb !== null),
      { q, limit, offset: 0 },
    );
    return hits;
  }

  /**
   * The knowledge bases an analysis searches: the organization's ORGANIZATION knowledge bases, the personal ones
   * of the member who asked and of the conversation's agent, and those attached to the agent (public ones of
   * other organizations included). Never another member's personal knowledge base.
   */
  async forAnalysis(organizationId: string, who: { userId: string; agentId: string }) {
    const tenant = this.repos.tenant(organizationId);
    const [readable, attached] = await Promise.all([
      tenant.knowledgeBases.listReadable({ userId: who.userId, agentIds: [who.agentId] }),
      tenant.agentKnowledgeBases.list(who.agentId),
    ]);
    const seen = new Set(readable.map((kb) => `${kb.organizationId}/${kb.knowledgeBaseId}`));
    const extra = await Promise.all(
      attached
        .filter((a) => !seen.has(`${a.kbOrganizationId}/${a.knowledgeBaseId}`))
        .map((a) =>
          a.kbOrganizationId === organizationId
            ? tenant.knowledgeBases.get(a.knowledgeBaseId)
            : this.repos.publicKnowledgeBases.findPublicKnowledgeBaseCrossOrg(
                a.kbOrganizationId,
                a.knowledgeBaseId,
              ),
        ),
    );
    return [...readable, ...extra.filter((kb): kb is KnowledgeBaseDoc => kb !== null)];
  }

  /** What an analysis's search tool finds in `forAnalysis`'s knowledge bases. */
  async searchForAnalysis(
    organizationId: string,
    who: { userId: string; agentId: string },
    q: string,
    limit: number,
  ) {
    const { hits } = await this.search(await this.forAnalysis(organizationId, who), { q, limit, offset: 0 });
    return hits;
  }

  private async everyReadable(ctx: RequestContext) {
    const [own, others] = await Promise.all([
      this.repos.tenant(ctx.organizationId).knowledgeBases.listReadable(await this.access.personalScope(ctx)),
      this.repos.publicKnowledgeBases.listPublicKnowledgeBasesCrossOrg(ctx.organizationId),
    ]);
    return [...own, ...others];
  }

  /** kbIds (with kbOrgs naming each one's organization): each must be readable, else 404. */
  private async named(ctx: RequestContext, kbIds: string, kbOrgs: string | undefined) {
    const ids = kbIds.split(',').map((s) => s.trim());
    const orgs = kbOrgs?.split(',').map((s) => s.trim()) ?? ids.map(() => ctx.organizationId);
    if (ids.length > MAX_KB_IDS) throw badRequest(`kbIds names at most ${MAX_KB_IDS} knowledge bases`);
    if (ids.some((id) => !id) || orgs.some((o) => !o))
      throw badRequest('kbIds and kbOrgs must not have empty entries');
    if (orgs.length !== ids.length)
      throw badRequest(
        `kbOrgs has ${orgs.length} entries and kbIds ${ids.length}: give one organization per id`,
      );
    return Promise.all(
      ids.map(async (id, i) => {
        if (orgs[i] === ctx.organizationId) return referenced('kbIds', id, this.access.readable(ctx, id));
        const kb = await this.repos.publicKnowledgeBases.findPublicKnowledgeBaseCrossOrg(orgs[i]!, id);
        if (!kb) throw invalidReference('kbIds', id);
        return kb;
      }),
    );
  }

  private async search(kbs: KnowledgeBaseDoc[], asked: SearchOptions) {
    const opts = { ...asked, limit: Math.min(asked.limit, MAX_SEARCH_LIMIT) };
    if (opts.offset + opts.limit > MAX_SEARCH_DEPTH)
      throw badRequest(`cursor + limit may reach at most ${MAX_SEARCH_DEPTH} hits`);
    // A pattern that cannot be matched cheaply is a 400 before any work (lib/patterns/glob.ts).
    const isMatch = opts.filePattern ? compileGlob(opts.filePattern) : undefined;
    // One query per embedding model and organization, with the files a filePattern leaves (none: no query).
    const groups = (
      await Promise.all(
        [...groupBy(kbs, (kb) => `${kb.embeddingModel}\n${kb.organizationId}`).values()].map(
          async (group) => {
            const { embeddingModel, organizationId } = group[0]!;
            const embedder = this.embedders.get(embeddingModel);
            const fileIds =
              embedder && isMatch ? await this.matchingFiles(organizationId, group, isMatch) : undefined;
            return embedder && fileIds?.length !== 0
              ? [{ embeddingModel, embedder, organizationId, group, fileIds }]
              : [];
          },
        ),
      )
    ).flat();
    const queryVectors = new Map<string, Promise<number[]>>();
    // Each model embeds the question once, whichever organizations' knowledge bases use it.
    const queryVector = (embeddingModel: string, embedder: Embedder) => {
      if (!queryVectors.has(embeddingModel))
        queryVectors.set(
          embeddingModel,
          embedder.embed([opts.q]).then((v) => v[0]!),
        );
      return queryVectors.get(embeddingModel)!;
    };
    // One past the page tells whether another page exists. Vectors of files not READY at their generation (a
    // reindex under way, a failed one) are dropped after the query, so a page left short asks again for twice as
    // many, up to MAX_SEARCH_FETCH, while the store may hold more.
    const wanted = opts.offset + opts.limit + 1;
    for (let topK = wanted; ; topK = Math.min(topK * 2, MAX_SEARCH_FETCH)) {
      const found = await Promise.all(
        groups.map(async ({ embeddingModel, embedder, organizationId, group, fileIds }) => {
          const ms = await this.vectors.query(embedder.model, organizationId, {
            vector: await queryVector(embeddingModel, embedder),
            topK,
            knowledgeBaseIds: group.map((kb) => kb.knowledgeBaseId),
            fileIds,
          });
          return ms.map((m): Scored => ({ ...m, organizationId }));
        }),
      );
      const matches = found.flat().sort((a, b) => b.score - a.score);
      const hits = await this.resolve(matches.slice(0, topK));
      const storeMayHoldMore = found.some((ms) => ms.length >= topK);
      if (hits.length >= wanted || !storeMayHoldMore || topK >= MAX_SEARCH_FETCH)
        return { hits: hits.slice(opts.offset, opts.offset + opts.limit), total: hits.length };
    }
  }

  /** Ids of the READY files whose name matches the glob (case-insensitive). */
  private async matchingFiles(
    organizationId: string,
    kbs: KnowledgeBaseDoc[],
    isMatch: (name: string) => boolean,
  ) {
    const files = await this.repos
      .tenant(organizationId)
      .kbFiles.readyNames(kbs.map((kb) => kb.knowledgeBaseId));
    const ids: string[] = [];
    for (let i = 0; i < files.length; i++) {
      // Each name costs little, but a global search may test many: let other requests in between.
      if (i > 0 && i % MATCH_CHUNK === 0) await new Promise((resolve) => setImmediate(resolve));
      if (isMatch(files[i]!.fileNameKey)) ids.push(files[i]!._id);
    }
    return ids;
  }

  /** Hits with their chunk text and file; vectors of files that are no longer READY at their generation are
   * dropped (a reindex or delete in progress). */
  private async resolve(matches: Scored[]): Promise<SearchHit[]> {
    const byOrg = groupBy(matches, (m) => m.organizationId);
    const chunks = new Map<string, KbChunkDoc>();
    const files = new Map<string, KbFileDoc>();
    await Promise.all(
      [...byOrg].map(async ([org, ms]) => {
        const tenant = this.repos.tenant(org);
        const [cs, fs] = await Promise.all([
          tenant.kbChunks.getMany(ms.map((m) => m.metadata.chunkId)),
          tenant.kbFiles.getMany([...new Set(ms.map((m) => m.metadata.fileId))]),
        ]);
        cs.forEach((c) => chunks.set(c._id, c));
        fs.forEach((f) => !f.deletedAt && files.set(f._id, f));
      }),
    );
    return matches.flatMap((m): SearchHit[] => {
      const chunk = chunks.get(m.metadata.chunkId);
      const file = files.get(m.metadata.fileId);
      if (!chunk || !file || file.status !== 'READY' || chunk.generation !== file.generation) return [];
      return [
        {
          vectorId: m.id,
          fileId: m.metadata.fileId,
          fileName: file.fileName,
          key: file.key,
          pages: chunk.pages ?? null,
          text: chunk.text,
          externalFileUrl: file.externalFileUrl ?? null,
          knowledgeBaseId: m.metadata.knowledgeBaseId,
          organizationId: m.organizationId,
          score: m.score,
        },
      ];
    });
  }
}
