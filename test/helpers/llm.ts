import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type OpenAI from 'openai';
import {
  completionBody,
  completionChunks,
  countTokens,
  embed,
  encodeEmbedding,
  errorBody,
  splitContent,
  writeSse,
  type Turn,
} from './llm-sse';

export interface ScriptedToolCall {
  name: string;
  /** An object is sent as its JSON; a string is sent as-is (so a test can script malformed arguments). */
  arguments: object | string;
  id?: string;
}

interface ReplyTiming {
  /** Wait before answering (timeouts, cancellation, heartbeats). */
  delayMs?: number;
  /** Wait between streamed chunks. */
  chunkDelayMs?: number;
}

/** An OpenAI error response; `retryAfterMs` sets the `retry-after-ms` header the SDK's retry honours. */
export interface ScriptedError {
  status: number;
  message: string;
  type?: string;
  code?: string;
  retryAfterMs?: number;
}

export type ScriptedReply =
  /** `cut`: the answer stops at the token limit (`finish_reason: length`), as a model's does mid-sentence. */
  | ({ content: string; chunks?: string[]; cut?: boolean } & ReplyTiming)
  | ({ toolCalls: ScriptedToolCall[]; content?: string } & ReplyTiming)
  | ({ error: ScriptedError } & ReplyTiming)
  | ((body: ChatRequest) => ScriptedReply | Promise<ScriptedReply>);

export type ChatRequest = OpenAI.Chat.ChatCompletionCreateParams;

export interface RecordedRequest {
  method: string;
  /** e.g. `/v1/chat/completions` */
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (undefined for GET). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- whatever the client sent
}

export interface ScriptedLlmOptions {
  /** Embedding size when the request gives no `dimensions`. Default 64. */
  dimensions?: number;
  /** Ids listed by GET /v1/models. */
  models?: string[];
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401. */
  apiKey?: string;
}

type Matcher = ((body: ChatRequest) => boolean) | { model: string };

/** The text of the last user message: what the default responder echoes. */
export function lastUserText(body: ChatRequest): string {
  const last = [...body.messages].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return last.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** The image parts (their URLs, usually `data:` URLs) of the last user message: what a vision request shows. */
export function lastUserImageUrls(body: ChatRequest): string[] {
  const last = [...body.messages].reverse().find((m) => m.role === 'user');
  if (!last || typeof last.content === 'string') return [];
  return last.content.flatMap((p) => (p.type === 'image_url' ? [p.image_url.url] : []));
}

const sleep = (ms = 0) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

/**
 * A scripted OpenAI-compatible server on loopback for tests: real HTTP, real SSE, so the service runs its
 * real `openai` SDK against it. Chat replies come from matching `on()` rules first, then the `enqueue()`
 * queue (FIFO), then the default responder (echoes the last user message; change it with setDefault).
 */
export class ScriptedLlm {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  private readonly queue: ScriptedReply[] = [];
  private readonly rules: { match: Matcher; reply: ScriptedReply; times: number }[] = [];
  private readonly embeddingErrors: ScriptedError[] = [];
  private fallback: ScriptedReply = (body) => ({ content: lastUserText(body) });
  private seq = 0;

  private constructor(
    private readonly server: Server,
    private readonly options: Required<Omit<ScriptedLlmOptions, 'apiKey'>> & { apiKey?: string },
  ) {}

  static async start(options: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
    const server = createServer();
    const llm = new ScriptedLlm(server, {
      dimensions: options.dimensions ?? 64,
      models: options.models ?? ['gpt-4o-mini', 'text-embedding-3-small'],
      apiKey: options.apiKey,
    });
    server.on('request', (req, res) => {
      llm.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) llm.send(res, 500, errorBody(500, `scripted LLM failed: ${String(err)}`));
        else res.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return llm;
  }

  /** `http://127.0.0.1:PORT/v1`, the SDK's `baseURL`. */
  get baseURL(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** The key clients should send (any non-empty key works unless one was configured). */
  get apiKey(): string {
    return this.options.apiKey ?? 'sk-scripted';
  }

  /** Chat completion request bodies only, in order. */
  get chatRequests(): ChatRequest[] {
    return this.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as ChatRequest);
  }

  /** Queued replies not yet consumed: a finished scenario should leave 0. */
  get pending(): number {
    return this.queue.length;
  }

  enqueue(...replies: ScriptedReply[]): this {
    for (const r of replies) {
      if (typeof r !== 'function' && 'chunks' in r && r.chunks && r.chunks.join('') !== r.content) {
        throw new Error('scripted reply: chunks must concatenate to content');
      }
    }
    this.queue.push(...replies);
    return this;
  }

  /** Answers matching chat requests with `reply` (before the queue), `times` times or forever. Returns off(). */
  on(match: Matcher, reply: ScriptedReply, times = Infinity): () => void {
    const rule = { match, reply, times };
    this.rules.push(rule);
    return () => {
      const i = this.rules.indexOf(rule);
      if (i >= 0) this.rules.splice(i, 1);
    };
  }

  /** The reply used when no rule matches and the queue is empty. */
  setDefault(reply: ScriptedReply): this {
    this.fallback = reply;
    return this;
  }

  /** The next n embedding requests fail with this error. */
  failEmbeddings(error: ScriptedError, n = 1): this {
    for (let i = 0; i < n; i++) this.embeddingErrors.push(error);
    return this;
  }

  /** Forgets requests, queue, rules, embedding errors and the default. */
  reset(): void {
    this.requests.length = 0;
    this.forgetScript();
  }

  /** Forgets the queue, rules, embedding errors and the default, keeping the requests seen. */
  forgetScript(): void {
    this.queue.length = 0;
    this.rules.length = 0;
    this.embeddingErrors.length = 0;
    this.fallback = (body) => ({ content: lastUserText(body) });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return this.send(res, 400, errorBody(400, 'request body is not valid JSON'));
    }
    this.requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
    if (this.options.apiKey && req.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      return this.send(res, 401, errorBody(401, 'Incorrect API key provided'));
    }
    const route = `${req.method} ${path}`;
    if (route === 'POST /v1/chat/completions') return this.chat(body as ChatRequest, res);
    if (route === 'POST /v1/embeddings') return this.embeddings(body as OpenAI.EmbeddingCreateParams, res);
    if (route === 'GET /v1/models') {
      const data = this.options.models.map((id) => ({
        id,
        object: 'model',
        created: 0,
        owned_by: 'scripted',
      }));
      return this.send(res, 200, { object: 'list', data });
    }
    this.send(res, 404, errorBody(404, `no route ${route}`));
  }

  private nextReply(body: ChatRequest): ScriptedReply {
    const rule = this.rules.find((r) =>
      typeof r.match === 'function' ? r.match(body) : r.match.model === body.model,
    );
    if (rule) {
      if (--rule.times <= 0) this.rules.splice(this.rules.indexOf(rule), 1);
      return rule.reply;
    }
    return this.queue.shift() ?? this.fallback;
  }

  private async chat(body: ChatRequest, res: ServerResponse): Promise<void> {
    let reply = this.nextReply(body);
    while (typeof reply === 'function') reply = await reply(body);
    await sleep(reply.delayMs);
    if ('error' in reply) return this.sendError(res, reply.error);
    const content = reply.content ?? null;
    const turn: Turn = {
      id: `chatcmpl-${++this.seq}`,
      model: body.model,
      created: Math.floor(Date.now() / 1000),
      content,
      pieces: 'chunks' in reply && reply.chunks ? reply.chunks : splitContent(content ?? ''),
      toolCalls: ('toolCalls' in reply ? reply.toolCalls : []).map((c, i) => ({
        id: c.id ?? `call_${this.seq}_${i}`,
        name: c.name,
        arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
      })),
      promptTokens: countTokens(body.messages.map((m) => JSON.stringify(m.content ?? '')).join(' ')),
      cut: 'cut' in reply && reply.cut === true,
    };
    if (!body.stream) return this.send(res, 200, completionBody(turn));
    await writeSse(
      res,
      completionChunks(turn, body.stream_options?.include_usage === true),
      reply.chunkDelayMs,
    );
  }

  private embeddings(body: OpenAI.EmbeddingCreateParams, res: ServerResponse): void {
    const failure = this.embeddingErrors.shift();
    if (failure) return this.sendError(res, failure);
    const inputs: unknown[] =
      typeof body.input === 'string' || typeof body.input[0] === 'number' ? [body.input] : body.input;
    // Token-id inputs are hashed by their ids, so they are deterministic too.
    const texts = inputs.map((i) => (typeof i === 'string' ? i : (i as number[]).join(' ')));
    const dimensions = body.dimensions ?? this.options.dimensions;
    const data = texts.map((t, index) => ({
      object: 'embedding' as const,
      index,
      embedding: encodeEmbedding(embed(t, dimensions), body.encoding_format),
    }));
    const tokens = texts.reduce((n, t) => n + countTokens(t), 0);
    this.send(res, 200, {
      object: 'list',
      data,
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  private sendError(res: ServerResponse, e: ScriptedError): void {
    if (e.retryAfterMs !== undefined) res.setHeader('retry-after-ms', String(e.retryAfterMs));
    this.send(res, e.status, errorBody(e.status, e.message, e.type, e.code));
  }

  private send(res: ServerResponse, status: number, body: object): void {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}

/** Starts a scripted OpenAI-compatible server on 127.0.0.1 with an ephemeral port. */
export const startScriptedLlm = (options?: ScriptedLlmOptions) => ScriptedLlm.start(options);
