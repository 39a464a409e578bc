// TEMPORARY (replaced by the vectors branch): an in-memory store
import type { VectorMatch, VectorRecord, VectorStore } from './vector-store';

const all = new Map<string, VectorRecord & { ns: string }>();
export function createVectorStore(_settings: unknown): VectorStore {
  const k = (m: { id: string }, ns: string, id: string) => `${m.id}|${ns}|${id}`;
  const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);
  const each = (m: { id: string }, ns: string) =>
    [...all.entries()].filter(([key, r]) => key.startsWith(`${m.id}|${ns}|`) && r.ns === ns);
  return {
    upsert: async (m, ns, records) => {
      records.forEach((r) => all.set(k(m, ns, r.id), { ...r, ns }));
    },
    query: async (m, ns, q) =>
      each(m, ns)
        .map(([, r]) => r)
        .filter((r) => q.knowledgeBaseIds.includes(r.metadata.knowledgeBaseId))
        .filter((r) => !q.fileIds || q.fileIds.includes(r.metadata.fileId))
        .map((r): VectorMatch => ({ id: r.id, score: dot(r.values, q.vector), metadata: r.metadata }))
        .sort((a, b) => b.score - a.score)
        .slice(0, q.topK),
    deleteFile: async (m, ns, kb, file) => {
      each(m, ns).forEach(
        ([key, r]) => r.metadata.fileId === file && r.metadata.knowledgeBaseId === kb && all.delete(key),
      );
    },
    deleteKnowledgeBase: async (m, ns, kb) => {
      each(m, ns).forEach(([key, r]) => r.metadata.knowledgeBaseId === kb && all.delete(key));
    },
    countFile: async (m, ns, kb, file) =>
      each(m, ns).filter(([, r]) => r.metadata.fileId === file && r.metadata.knowledgeBaseId === kb).length,
    close: async () => undefined,
  };
}
