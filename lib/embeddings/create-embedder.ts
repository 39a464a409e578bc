// TEMPORARY (replaced by the vectors branch): a bag-of-words hashing embedder
import type OpenAI from 'openai';
import type { Embedder } from './embedder';

export function createEmbedder(_settings: unknown, _llm: OpenAI): Embedder {
  const dims = 256;
  return {
    model: { id: 'local:all-MiniLM-L6-v2', dimensions: dims },
    embed: async (texts) =>
      texts.map((t) => {
        const v = new Array<number>(dims).fill(0);
        for (const w of t.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
          let h = 0;
          for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
          v[h % dims]! += 1;
        }
        const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
        return v.map((x) => x / n);
      }),
  };
}
