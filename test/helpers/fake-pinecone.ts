import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for Pinecone serverless indexes' data plane (we cannot reach Pinecone from here), speaking the
 * subset of the REST API that `@pinecone-database/pinecone` calls for our adapter, with the shapes of the
 * SDK's generated client (node_modules/@pinecone-database/pinecone/dist/pinecone-generated-ts-fetch/db_data):
 *
 *   POST /vectors/upsert   {vectors: [{id, values, metadata}], namespace}        → {upsertedCount}
 *   POST /query            {namespace, topK, vector, filter, includeValues, includeMetadata}
 *                          → {results: [], matches: [{id, score, values, metadata}], namespace, usage}
 *   GET  /vectors/list     ?namespace&prefix&limit&paginationToken → {vectors: [{id}], pagination?, namespace, usage}
 *   POST /vectors/delete   {ids, namespace}                                        → {}
 *   GET  /vectors/fetch    ?ids&namespace → {vectors: {id: record}, namespace, usage}
 *
 * and the limits and refusals that shape the adapter: one index per dimension (others refused), 1000 vectors
 * and 2 MB per upsert, 1000 ids per delete, no delete by metadata filter (serverless), list pages of at most
 * 100 ids in byte order, topK ≤ 1000 when metadata or values are returned, the Api-Key header. Errors come as
 * the API's RpcStatus body `{code, message, details}` (gRPC code 3 for bad arguments, 16 unauthenticated).
 * Scores are cosine similarity (the indexes' metric). Every index is its own server, as each has its own host.
 */
type Metadata = Record<string, string | number | boolean | string[]>;
interface StoredVector {
  id: string;
  values: number[];
  metadata?: Metadata;
}

export interface FakeIndexSpec {
  dimension: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
const invalid = (message: string) => new HttpError(400, 3, message);

const MAX_UPSERT_BYTES = 2 * 1024 * 1024;

export class FakePineconeIndex {
  /** namespace → id → vector */
  readonly namespaces = new Map<string, Map<string, StoredVector>>();
  /** `METHOD path` of every request, in order */
  readonly requests: string[] = [];
  private server!: Server;

  constructor(
    readonly name: string,
    readonly dimension: number,
    private readonly apiKey: string,
  ) {}

  async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        const e = err instanceof HttpError ? err : new HttpError(500, 13, String(err));
        send(res, e.status, { code: e.code, message: e.message, details: [] });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  get host(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push(`${req.method} ${url.pathname}`);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    if (req.headers['api-key'] !== this.apiKey) throw new HttpError(401, 16, 'Invalid API Key');
    if (!req.headers['x-pinecone-api-version']) throw invalid('missing X-Pinecone-Api-Version');
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /vectors/list') return send(res, 200, this.list(url.searchParams));
    if (route === 'GET /vectors/fetch') return send(res, 200, this.fetch(url.searchParams));
    if (raw.length > MAX_UPSERT_BYTES) {
      throw invalid(`Request size ${raw.length} bytes exceeds the maximum supported size of 2MB`);
    }
    const body = JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>;
    if (route === 'POST /vectors/upsert') return send(res, 200, this.upsert(body));
    if (route === 'POST /query') return send(res, 200, this.query(body));
    if (route === 'POST /vectors/delete') return send(res, 200, this.delete(body));
    throw new HttpError(404, 5, `Not Found: ${route}`);
  }

  private ns(name: unknown, create = false): Map<string, StoredVector> | undefined {
    const key = typeof name === 'string' ? name : '';
    let ns = this.namespaces.get(key);
    if (!ns && create) this.namespaces.set(key, (ns = new Map()));
    return ns;
  }

  private upsert(body: Record<string, unknown>): object {
    const vectors = body.vectors as StoredVector[] | undefined;
    if (!Array.isArray(vectors) || vectors.length === 0)
      throw invalid('vectors: must contain at least 1 vector');
    if (vectors.length > 1000) throw invalid(`Batch size ${vectors.length} exceeds the maximum of 1000`);
    for (const v of vectors) {
      if (typeof v.id !== 'string' || v.id.length === 0 || v.id.length > 512)
        throw invalid('invalid vector id');
      if (!Array.isArray(v.values) || v.values.length !== this.dimension) {
        throw invalid(
          `Vector dimension ${v.values?.length ?? 0} does not match the dimension of the index ${this.dimension}`,
        );
      }
      for (const [k, value] of Object.entries(v.metadata ?? {})) {
        const ok =
          ['string', 'number', 'boolean'].includes(typeof value) ||
          (Array.isArray(value) && value.every((x) => typeof x === 'string'));
        if (!ok)
          throw invalid(`Metadata value for field ${k} must be a string, number, boolean or list of strings`);
      }
    }
    const ns = this.ns(body.namespace, true)!;
    for (const v of vectors) ns.set(v.id, { id: v.id, values: v.values, metadata: v.metadata });
    return { upsertedCount: vectors.length };
  }

  private query(body: Record<string, unknown>): object {
    const topK = body.topK;
    if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 1 || topK > 10_000) {
      throw invalid('topK: must be an integer between 1 and 10000');
    }
    if ((body.includeMetadata || body.includeValues) && topK > 1000) {
      throw invalid('topK must be less than or equal to 1000 when includeMetadata or includeValues is true');
    }
    const vector = body.vector as number[] | undefined;
    if (!Array.isArray(vector) || vector.length !== this.dimension) {
      throw invalid(
        `Query vector dimension ${vector?.length ?? 0} does not match the dimension of the index ${this.dimension}`,
      );
    }
    const filter = (body.filter ?? {}) as Record<string, unknown>;
    const matches = [...(this.ns(body.namespace)?.values() ?? [])]
      .filter((v) => matchesFilter(v.metadata ?? {}, filter))
      .map((v) => ({ v, score: cosine(vector, v.values) }))
      .sort((a, b) => b.score - a.score || (a.v.id < b.v.id ? -1 : 1))
      .slice(0, topK)
      .map(({ v, score }) => ({
        id: v.id,
        score,
        values: body.includeValues ? v.values : [],
        ...(body.includeMetadata && v.metadata ? { metadata: v.metadata } : {}),
      }));
    return { results: [], matches, namespace: body.namespace ?? '', usage: { readUnits: 5 } };
  }

  private list(params: URLSearchParams): object {
    const limit = Number(params.get('limit') ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw invalid('limit: must be between 1 and 100');
    const prefix = params.get('prefix') ?? '';
    const token = params.get('paginationToken');
    const after = token ? Buffer.from(token, 'base64url').toString('utf8') : undefined;
    const ids = [...(this.ns(params.get('namespace'))?.keys() ?? [])]
      .filter((id) => id.startsWith(prefix) && (after === undefined || byteOrder(id, after) > 0))
      .sort(byteOrder);
    const page = ids.slice(0, limit);
    const more = ids.length > limit;
    return {
      vectors: page.map((id) => ({ id })),
      ...(more ? { pagination: { next: Buffer.from(page.at(-1)!, 'utf8').toString('base64url') } } : {}),
      namespace: params.get('namespace') ?? '',
      usage: { readUnits: 1 },
    };
  }

  private fetch(params: URLSearchParams): object {
    const ns = this.ns(params.get('namespace'));
    const vectors: Record<string, StoredVector> = {};
    for (const id of params.getAll('ids')) {
      const v = ns?.get(id);
      if (v) vectors[id] = v;
    }
    return { vectors, namespace: params.get('namespace') ?? '', usage: { readUnits: 1 } };
  }

  private delete(body: Record<string, unknown>): object {
    if (body.filter !== undefined) {
      throw invalid('Serverless and Starter indexes do not support deleting with metadata filtering');
    }
    const ns = this.ns(body.namespace);
    if (body.deleteAll === true) {
      ns?.clear();
      return {};
    }
    const ids = body.ids as string[] | undefined;
    if (!Array.isArray(ids) || ids.length === 0) throw invalid('ids: must contain at least 1 id');
    if (ids.length > 1000) throw invalid(`Delete request size ${ids.length} exceeds the maximum of 1000 ids`);
    for (const id of ids) ns?.delete(id);
    return {};
  }
}

export class FakePinecone {
  readonly indexes = new Map<string, FakePineconeIndex>();

  private constructor(readonly apiKey: string) {}

  /** Starts one fake index server per entry of `indexes` (index name → dimension). */
  static async start(indexes: Record<string, FakeIndexSpec>, apiKey = 'pc-test-key'): Promise<FakePinecone> {
    const fake = new FakePinecone(apiKey);
    for (const [name, spec] of Object.entries(indexes)) {
      const index = new FakePineconeIndex(name, spec.dimension, apiKey);
      await index.listen();
      fake.indexes.set(name, index);
    }
    return fake;
  }

  index(name: string): FakePineconeIndex {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no fake index ${name}`);
    return index;
  }

  async close(): Promise<void> {
    await Promise.all([...this.indexes.values()].map((i) => i.close()));
  }
}

function send(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / (Math.sqrt(na) * Math.sqrt(nb) || 1);
}

/** Pinecone's metadata filter language: $eq $ne $in $nin $gt $gte $lt $lte $exists, $and, $or, bare values. */
function matchesFilter(metadata: Metadata, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([key, condition]) => {
    if (key === '$and')
      return (condition as Record<string, unknown>[]).every((f) => matchesFilter(metadata, f));
    if (key === '$or')
      return (condition as Record<string, unknown>[]).some((f) => matchesFilter(metadata, f));
    const value = metadata[key];
    const ops =
      condition !== null && typeof condition === 'object' && !Array.isArray(condition)
        ? (condition as Record<string, unknown>)
        : { $eq: condition };
    return Object.entries(ops).every(([op, arg]) => compare(value, op, arg));
  });
}

function compare(value: Metadata[string] | undefined, op: string, arg: unknown): boolean {
  const has = (x: unknown) => (Array.isArray(value) ? value.includes(x as string) : value === x);
  switch (op) {
    case '$eq':
      return has(arg);
    case '$ne':
      return !has(arg);
    case '$in':
      return (arg as unknown[]).some(has);
    case '$nin':
      return !(arg as unknown[]).some(has);
    case '$exists':
      return (value !== undefined) === arg;
    case '$gt':
      return typeof value === 'number' && value > (arg as number);
    case '$gte':
      return typeof value === 'number' && value >= (arg as number);
    case '$lt':
      return typeof value === 'number' && value < (arg as number);
    case '$lte':
      return typeof value === 'number' && value <= (arg as number);
    default:
      throw invalid(`unsupported filter operator ${op}`);
  }
}
