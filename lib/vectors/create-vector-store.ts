import type { LanceIndexSettings } from '@lib/vectors/lancedb';
import type { LanceCacheSettings } from '@lib/vectors/lancedb-caches';
import type { PineconeSettings } from '@lib/vectors/pinecone';
import type { VectorStore } from '@lib/vectors/vector-store';

export type VectorStoreSettings =
  | { kind: 'lancedb'; dir: string; index?: Partial<LanceIndexSettings>; caches?: LanceCacheSettings }
  | ({ kind: 'pinecone' } & PineconeSettings);

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, see createVectorStore */
function openStore(settings: VectorStoreSettings): VectorStore {
  if (settings.kind === 'pinecone') {
    const { PineconeVectorStore } = require('./pinecone') as typeof import('./pinecone');
    return new PineconeVectorStore({ apiKey: settings.apiKey, indexes: settings.indexes });
  }
  const { LanceVectorStore } = require('./lancedb') as typeof import('./lancedb');
  return new LanceVectorStore(settings.dir, settings.index, settings.caches);
}
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The configured store. Its client library (LanceDB with Arrow, or Pinecone's SDK: tens of MB each) loads on the
 * first call, so a process that never touches vectors (an API serving no search) never carries it.
 */
export function createVectorStore(settings: VectorStoreSettings): VectorStore {
  let store: VectorStore | undefined;
  const open = () => (store ??= openStore(settings));
  return {
    upsert: (...args) => open().upsert(...args),
    query: (...args) => open().query(...args),
    deleteFile: (...args) => open().deleteFile(...args),
    deleteKnowledgeBase: (...args) => open().deleteKnowledgeBase(...args),
    countFile: (...args) => open().countFile(...args),
    close: () => store?.close() ?? Promise.resolve(),
  };
}
