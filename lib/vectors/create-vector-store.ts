import { LanceVectorStore, type LanceIndexSettings } from '@lib/vectors/lancedb';
import { PineconeVectorStore, type PineconeSettings } from '@lib/vectors/pinecone';
import type { VectorStore } from '@lib/vectors/vector-store';

export type VectorStoreSettings =
  | { kind: 'lancedb'; dir: string; index?: Partial<LanceIndexSettings> }
  | ({ kind: 'pinecone' } & PineconeSettings);

export function createVectorStore(settings: VectorStoreSettings): VectorStore {
  if (settings.kind === 'pinecone') {
    return new PineconeVectorStore({ apiKey: settings.apiKey, indexes: settings.indexes });
  }
  return new LanceVectorStore(settings.dir, settings.index);
}
