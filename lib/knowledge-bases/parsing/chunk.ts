import type { Chunk, TextSegment } from './types';

export const DEFAULT_CHUNK_SIZE = 1200;
export const DEFAULT_CHUNK_OVERLAP = 200;

/** Segments are joined by a paragraph break, so a page boundary is also a preferred place to cut. */
const SEPARATOR = '\n\n';

interface Placed {
  start: number;
  end: number;
  page?: number;
}

/**
 * Cuts a document's segments into chunks of about `size` characters, each starting `overlap` characters
 * before the previous one ended (so a sentence cut at a boundary is whole in one of the two). Cuts go at
 * the last paragraph break, else line or sentence end, else space in the second half of the window; only
 * text without any of these is cut mid-word. A chunk may span pages: `pages` is `5` or `5-7`.
 * A pure function of its input: ingestion derives vector ids from chunk indexes, so re-ingesting the same
 * file must give the same chunks.
 */
export function chunkSegments(
  segments: TextSegment[],
  opts: { size?: number; overlap?: number } = {},
): Chunk[] {
  const size = Math.floor(opts.size ?? DEFAULT_CHUNK_SIZE);
  if (!(size >= 1)) throw new RangeError(`chunk size must be at least 1, got ${opts.size}`);
  // An overlap as large as the chunk would never move forward; half a chunk is the most that is useful.
  const overlap = Math.min(
    Math.max(0, Math.floor(opts.overlap ?? DEFAULT_CHUNK_OVERLAP)),
    Math.floor(size / 2),
  );

  const placed: Placed[] = [];
  let text = '';
  for (const segment of segments) {
    if (segment.text.trim() === '') continue;
    if (text) text += SEPARATOR;
    placed.push({ start: text.length, end: text.length + segment.text.length, page: segment.page });
    text += segment.text;
  }

  const chunks: Chunk[] = [];
  let start = skipSpace(text, 0);
  while (start < text.length) {
    const end = findCut(text, start, start + size);
    const body = text.slice(start, end).trimEnd();
    if (body) {
      chunks.push({ index: chunks.length, text: body, pages: pagesOf(placed, start, start + body.length) });
    }
    if (end >= text.length) break;
    start = skipSpace(text, nextStart(text, start, end, overlap));
  }
  return chunks;
}

/** Where the chunk starting at `start` ends (exclusive), at most at `limit`. */
function findCut(text: string, start: number, limit: number): number {
  if (limit >= text.length) return text.length;
  // Boundaries in the first half would make small chunks; below it, a mid-word cut is the lesser evil.
  const min = start + Math.ceil((limit - start) / 2);
  const paragraph = text.lastIndexOf('\n\n', limit - 1);
  if (paragraph >= min) return paragraph;
  for (let i = limit; i >= min; i--) {
    const c = text[i];
    if (c === '\n' || (isSpace(c) && isSentenceEnd(text, i - 1))) return i;
  }
  for (let i = limit; i >= min; i--) if (isSpace(text[i])) return i;
  return limit;
}

/** The next chunk begins `overlap` characters before `end`, moved forward to the start of a word. */
function nextStart(text: string, start: number, end: number, overlap: number): number {
  const from = Math.max(start + 1, end - overlap);
  if (from >= end) return end;
  for (let i = from; i < end; i++) {
    if (isSpace(text[i - 1]) && !isSpace(text[i])) return i;
  }
  return from;
}

function isSentenceEnd(text: string, i: number): boolean {
  let j = i;
  // Closing quotes or brackets after the stop: `He said "no."`
  while (j > 0 && '"\')]»”’'.includes(text[j]!)) j--;
  return '.!?。！？…'.includes(text[j] ?? ' ');
}

function isSpace(c: string | undefined): boolean {
  return c !== undefined && /\s/.test(c);
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text[i])) i++;
  return i;
}

/** `5`, `5-7`, or null when none of the segments the range touches has a page. */
function pagesOf(placed: Placed[], start: number, end: number): string | null {
  // First segment ending after `start` (segments are in order and do not overlap).
  let lo = 0;
  let hi = placed.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (placed[mid]!.end <= start) lo = mid + 1;
    else hi = mid;
  }
  let first: number | undefined;
  let last: number | undefined;
  for (let i = lo; i < placed.length && placed[i]!.start < end; i++) {
    const page = placed[i]!.page;
    if (page === undefined) continue;
    first = first === undefined ? page : Math.min(first, page);
    last = last === undefined ? page : Math.max(last, page);
  }
  if (first === undefined || last === undefined) return null;
  return first === last ? String(first) : `${first}-${last}`;
}
