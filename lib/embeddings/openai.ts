import OpenAI from 'openai';
import { EmbeddingRejected, type Embedder } from '@lib/embeddings/embedder';
import type { EmbeddingModelRef } from '@lib/vectors/vector-store';

/** Output sizes of OpenAI's embedding models at their default `dimensions`. */
export const OPENAI_EMBEDDING_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/**
 * A failure that a later attempt may not meet (rate limit, server error, network): the activity should fail
 * and be retried. `retryAfterMs` is the wait the server asked for, when it named one longer than we sleep
 * in-process; the activity can pass it on as Temporal's `nextRetryDelay`.
 */
export class EmbeddingUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'EmbeddingUnavailable';
  }
}

export interface OpenAiEmbedderOptions {
  /** e.g. `text-embedding-3-small` */
  model: string;
  /** Needed only for a model missing from OPENAI_EMBEDDING_DIMENSIONS; otherwise learned from the first reply. */
  dimensions?: number;
  /** Inputs per request (the API takes up to 2048). */
  maxInputs?: number;
  /** Characters per request, a cheap stand-in for the API's per-request token limit (about 4 characters a token). */
  maxCharsPerRequest?: number;
  /** A rate limit or server error whose Retry-After is at most this is waited out and the request sent once more. */
  maxInProcessWaitMs?: number;
}

/** Statuses a later attempt can get past: timeout, conflict, rate limit (everything >= 500 too). */
const RETRYABLE_4XX = new Set([408, 409, 429]);

/**
 * The OpenAI (or compatible) embeddings API through the service's one client, which never retries itself:
 * Temporal retries the activity. Inputs go in batches; vectors come back in input order.
 */
export class OpenAiEmbedder implements Embedder {
  private dimensions: number | undefined;
  private readonly maxInputs: number;
  private readonly maxChars: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly client: OpenAI,
    private readonly options: OpenAiEmbedderOptions,
  ) {
    this.dimensions = options.dimensions ?? OPENAI_EMBEDDING_DIMENSIONS[options.model];
    this.maxInputs = options.maxInputs ?? 96;
    this.maxChars = options.maxCharsPerRequest ?? 200_000;
    this.maxWaitMs = options.maxInProcessWaitMs ?? 5_000;
  }

  /** `dimensions` is 0 until the first reply for a model whose size is not known in advance. */
  get model(): EmbeddingModelRef {
    return { id: `openai:${this.options.model}`, dimensions: this.dimensions ?? 0 };
  }

  async embed(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (const batch of this.batches(texts)) out.push(...(await this.request(batch, true)));
    return out;
  }

  private *batches(texts: string[]): Generator<string[]> {
    let batch: string[] = [];
    let chars = 0;
    for (const t of texts) {
      if (batch.length > 0 && (batch.length >= this.maxInputs || chars + t.length > this.maxChars)) {
        yield batch;
        batch = [];
        chars = 0;
      }
      batch.push(t);
      chars += t.length;
    }
    if (batch.length > 0) yield batch;
  }

  private async request(batch: string[], mayWait: boolean): Promise<number[][]> {
    let reply: OpenAI.CreateEmbeddingResponse;
    try {
      reply = await this.client.embeddings.create({ model: this.options.model, input: batch });
    } catch (err) {
      const failure = classify(err);
      if (failure instanceof EmbeddingUnavailable && mayWait && failure.retryAfterMs !== undefined) {
        if (failure.retryAfterMs <= this.maxWaitMs) {
          await new Promise((r) => setTimeout(r, failure.retryAfterMs));
          return this.request(batch, false);
        }
      }
      throw failure;
    }
    return this.vectors(reply, batch.length);
  }

  private vectors(reply: OpenAI.CreateEmbeddingResponse, count: number): number[][] {
    if (reply.data.length !== count) {
      throw new EmbeddingUnavailable(
        `embeddings API returned ${reply.data.length} vectors for ${count} inputs`,
      );
    }
    const byIndex = [...reply.data].sort((a, b) => a.index - b.index);
    return byIndex.map(({ embedding }) => {
      this.dimensions ??= embedding.length;
      if (embedding.length !== this.dimensions) {
        // A model that answers with another size than configured will not change its mind on a retry.
        throw new EmbeddingRejected(
          `model ${this.options.model} returned ${embedding.length} dimensions, expected ${this.dimensions}`,
        );
      }
      return normalized(embedding);
    });
  }
}

/** Turns an SDK failure into EmbeddingRejected (retrying cannot help) or EmbeddingUnavailable. */
export function classify(err: unknown): Error {
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const status = err.status;
    if (status >= 400 && status < 500 && !RETRYABLE_4XX.has(status)) {
      return new EmbeddingRejected(`embeddings API refused the request (${status}): ${err.message}`);
    }
    return new EmbeddingUnavailable(
      `embeddings API failed (${status}): ${err.message}`,
      retryAfterMs(err.headers as Headers | undefined),
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new EmbeddingUnavailable(`embeddings API unreachable: ${message}`);
}

/** `retry-after-ms` (OpenAI's) or `retry-after` in seconds or as an HTTP date. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** OpenAI's vectors are unit length already; a compatible server's may not be, and scores assume it. */
function normalized(v: number[]): number[] {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  return norm > 0 ? v.map((x) => x / norm) : v;
}
