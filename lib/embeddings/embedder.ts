import type { EmbeddingModelRef } from '@lib/vectors/vector-store';

/**
 * Turns text into vectors. Two adapters: a local sentence-embedding model run in-process (the default, so the
 * service works offline with no API key) and the OpenAI-compatible embeddings API.
 */
export interface Embedder {
  readonly model: EmbeddingModelRef;
  /** One vector per text, in order, each of `model.dimensions` numbers, L2-normalised. */
  embed(texts: string[]): Promise<number[][]>;
}

/** A failure that retrying will not fix (the server refused the input or the model): ingestion ends in ERROR. */
export class EmbeddingRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingRejected';
  }
}
