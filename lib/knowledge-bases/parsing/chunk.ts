// TEMPORARY (replaced by the parsing branch)
import type { Chunk, TextSegment } from './types';

export function chunkSegments(segments: TextSegment[]): Chunk[] {
  const text = segments.map((s) => s.text).join('\n');
  const out: Chunk[] = [];
  for (let i = 0; i < text.length; i += 1000)
    out.push({ index: out.length, text: text.slice(i, i + 1200), pages: null });
  return out;
}
