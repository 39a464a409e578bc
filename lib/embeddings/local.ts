import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { Embedder } from '@lib/embeddings/embedder';
import { OnnxThread } from '@lib/embeddings/onnx-thread';
import type { EmbeddingModelRef } from '@lib/vectors/vector-store';

export const LOCAL_MODEL: EmbeddingModelRef = { id: 'local:all-MiniLM-L6-v2', dimensions: 384 };

/** sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (its own truncation), [CLS] and [SEP] included. */
const MAX_TOKENS = 256;

export interface LocalEmbedderOptions {
  /**
   * Padded tokens per inference call (about 3 s of one core here for 2048). Concurrent embed() calls take
   * turns per call, so this also bounds how long one caller waits behind another's batch.
   */
  tokenBudget?: number;
  /** Threads for one inference call: the process runs other work beside it, so one by default. */
  threads?: number;
}

interface Encoded {
  index: number;
  ids: number[];
}

/**
 * all-MiniLM-L6-v2 run in-process from a local folder (`model.onnx` plus `tokenizer.json` and
 * `tokenizer_config.json`, provisioned by stack/provision.mjs#ensureEmbeddingModel): BERT last hidden state,
 * mean pooling over real tokens, L2 normalisation — what sentence-transformers computes for this model.
 */
export class LocalEmbedder implements Embedder {
  readonly model = LOCAL_MODEL;
  /** Inference calls run one at a time: on a 2-core machine running them in parallel only adds contention. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly thread: OnnxThread,
    private readonly tokenizer: Tokenizer,
    private readonly tokenBudget: number,
  ) {}

  static async load(dir: string, options: LocalEmbedderOptions = {}): Promise<LocalEmbedder> {
    const readJson = async (file: string): Promise<object> =>
      JSON.parse(await readFile(join(dir, file), 'utf8')) as object;
    const tokenizerJson = await readJson('tokenizer.json');
    const tokenizerConfig = await readJson('tokenizer_config.json');
    const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    const thread = await OnnxThread.start(join(dir, 'model.onnx'), options.threads ?? 1);
    return new LocalEmbedder(thread, tokenizer, options.tokenBudget ?? 2048);
  }

  async embed(texts: string[]): Promise<number[][]> {
    const out = new Array<number[]>(texts.length);
    // Similar lengths share a batch so little compute goes to padding; results go back by index.
    const encoded = texts.map((t, index) => ({ index, ids: this.tokenize(t) }));
    encoded.sort((a, b) => a.ids.length - b.ids.length);
    for (const batch of this.batches(encoded)) {
      const vectors = await this.serialized(() => this.run(batch));
      batch.forEach((e, i) => (out[e.index] = vectors[i]!));
    }
    return out;
  }

  private tokenize(text: string): number[] {
    const ids = this.tokenizer.encode(text).ids;
    if (ids.length <= MAX_TOKENS) return ids;
    return [...ids.slice(0, MAX_TOKENS - 1), ids[ids.length - 1]!];
  }

  /** Groups sorted inputs so that (batch size × longest length) stays within the token budget. */
  private *batches(sorted: Encoded[]): Generator<Encoded[]> {
    let batch: Encoded[] = [];
    for (const e of sorted) {
      if (batch.length > 0 && (batch.length + 1) * e.ids.length > this.tokenBudget) {
        yield batch;
        batch = [];
      }
      batch.push(e);
    }
    if (batch.length > 0) yield batch;
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async run(batch: Encoded[]): Promise<number[][]> {
    const length = Math.max(...batch.map((e) => e.ids.length));
    const size = batch.length * length;
    const ids = new BigInt64Array(size);
    const mask = new BigInt64Array(size);
    batch.forEach((e, b) =>
      e.ids.forEach((id, t) => {
        ids[b * length + t] = BigInt(id);
        mask[b * length + t] = 1n;
      }),
    );
    const hidden = await this.thread.run(ids, mask, [batch.length, length]);
    const d = this.model.dimensions;
    return batch.map((e, b) => meanPoolNormalized(hidden, b * length * d, e.ids.length, d));
  }

  /** Stops the model's thread (tests; a service process keeps its model until it exits). */
  close(): Promise<void> {
    return this.thread.close();
  }
}

/** Mean of the first `tokens` rows of one sequence's hidden states (padding excluded), L2-normalised. */
function meanPoolNormalized(hidden: Float32Array, offset: number, tokens: number, d: number): number[] {
  // The sum points the same way as the mean, and normalising removes the length.
  const sum = new Float64Array(d);
  for (let t = 0; t < tokens; t++) {
    for (let i = 0; i < d; i++) sum[i] = sum[i]! + hidden[offset + t * d + i]!;
  }
  let norm = 0;
  for (const v of sum) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  return Array.from(sum, (v) => v / norm);
}
