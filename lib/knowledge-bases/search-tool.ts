import type { ModelTool } from '@contracts';
import type { SearchHit } from './kb-search.service';

/** The tool an agent's turns (and a chain step) get when knowledge bases are attached to it. */
export const KB_SEARCH_TOOL = 'search_knowledge_bases';
const MAX_HITS = 10;

export function kbSearchModelTool(kbTitles: string[]): ModelTool {
  const titles = kbTitles.map((t) => `"${t}"`).join(', ');
  return {
    name: KB_SEARCH_TOOL,
    description:
      `Search the knowledge bases ${titles} for passages relevant to a question. ` +
      'Answer from the passages and cite each one you use as [fileName, pages].',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to look for, in plain words' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_HITS,
          description: 'How many passages (default 5)',
        },
      },
      required: ['query'],
    },
    executor: 'server',
  };
}

/** What the model reads of the hits: the passage and a citation to copy. */
export function hitsForModel(hits: SearchHit[]) {
  return hits.map((h) => ({
    citation: h.pages ? `[${h.fileName}, p. ${h.pages}]` : `[${h.fileName}]`,
    text: h.text,
    score: Number(h.score.toFixed(3)),
    ...(h.externalFileUrl ? { url: h.externalFileUrl } : {}),
  }));
}

export function searchArgs(args: Record<string, unknown>): { query: string; limit: number } | null {
  if (typeof args.query !== 'string' || !args.query.trim()) return null;
  const limit = Number.isInteger(args.limit) ? Math.min(Math.max(Number(args.limit), 1), MAX_HITS) : 5;
  return { query: args.query, limit };
}
