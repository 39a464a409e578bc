import { AppError } from '@lib/errors';
import { expressionLimits } from '@lib/expressions/limits';

/*
 * Glob patterns tenants write (a knowledge-base search's filePattern), matched in time linear in the name for
 * each piece of the pattern: no regular expression, no backtracking. What a pattern may hold: `*` (any run of
 * characters but `/`), `?` (one character but `/`), `[abc]`, `[a-z]`, `[!abc]`, `\x` (x itself), and one level
 * of `{a,b}` alternatives. Extended globs (`+(…)`, `@(…)`, `!(…)`) are refused: picomatch turns them into
 * regular expressions that backtrack (one filePattern held the API's event loop for a minute).
 */

/** Alternatives a pattern's braces may expand to. */
const MAX_ALTERNATIVES = 32;

/** One character of a name: a literal, any character (`?`) or a class. */
type CharTest = string | { any: true } | { ranges: [string, string][]; negated: boolean };
/** The pieces of one path component between its `*`s (one piece when it has none). */
type Component = { pieces: CharTest[][]; starred: boolean };

export const invalidPattern = (message: string) => new AppError(400, 'invalid_pattern', message);

// Names are matched one component at a time, so no character tested here is a `/`.
function matchesChar(test: CharTest, c: string): boolean {
  if (typeof test === 'string') return test === c;
  if ('any' in test) return true;
  const inside = test.ranges.some(([from, to]) => c >= from && c <= to);
  return inside !== test.negated;
}

function pieceAt(piece: CharTest[], name: string, at: number): boolean {
  for (let i = 0; i < piece.length; i++) if (!matchesChar(piece[i]!, name[at + i]!)) return false;
  return true;
}

/** The first position ≥ from where the piece matches, within [from, end); -1 when none. */
function find(piece: CharTest[], name: string, from: number, end: number): number {
  if (piece.every((t) => typeof t === 'string')) {
    const at = name.indexOf(piece.join(''), from);
    return at >= 0 && at + piece.length <= end ? at : -1;
  }
  // Only `?`s: the first place fits.
  if (piece.every((t) => typeof t !== 'string' && 'any' in t)) return from + piece.length <= end ? from : -1;
  // Jump between the places where the piece's first literal character is (when it has one).
  const k = piece.findIndex((t) => typeof t === 'string');
  for (let at = from; at + piece.length <= end; at++) {
    if (k >= 0) {
      const next = name.indexOf(piece[k] as string, at + k);
      if (next < 0) return -1;
      at = next - k;
      if (at + piece.length > end) return -1;
    }
    if (pieceAt(piece, name, at)) return at;
  }
  return -1;
}

/** Whether one component of a name (no `/`) matches: the first piece at the start, the last at the end, the
 * others each at its leftmost place in between (leftmost is never worse, so nothing is ever tried twice). */
function componentMatches({ pieces, starred }: Component, name: string): boolean {
  const first = pieces[0]!;
  if (!starred) return name.length === first.length && pieceAt(first, name, 0);
  const last = pieces[pieces.length - 1]!;
  if (name.length < first.length + last.length) return false;
  if (!pieceAt(first, name, 0) || !pieceAt(last, name, name.length - last.length)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = find(piece, name, at, end);
    if (found < 0) return false;
    at = found + piece.length;
  }
  return true;
}

/** Parses one alternative (no braces left) into its components; counts its wildcards. */
function parseAlternative(pattern: string): { components: Component[]; wildcards: number } {
  let wildcards = 0;
  const components = pattern.split('/').map((text): Component => {
    const pieces: CharTest[][] = [[]];
    let starred = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      const current = pieces[pieces.length - 1]!;
      if (c === '\\' && i + 1 < text.length) current.push(text[++i]!);
      else if (c === '*') {
        // `**` is `*` here: file names are matched one component at a time.
        if (text[i - 1] !== '*') wildcards++;
        pieces.push([]);
        starred = true;
      } else if (c === '?') {
        wildcards++;
        current.push({ any: true });
      } else if (c === '[' && text.indexOf(']', i + 2) > 0) {
        const close = text.indexOf(']', i + 2);
        let body = text.slice(i + 1, close);
        const negated = body[0] === '!' || body[0] === '^';
        if (negated) body = body.slice(1);
        const ranges: [string, string][] = [];
        for (let j = 0; j < body.length; j++)
          if (body[j + 1] === '-' && j + 2 < body.length) {
            ranges.push([body[j]!, body[j + 2]!]);
            j += 2;
          } else ranges.push([body[j]!, body[j]!]);
        wildcards++;
        current.push({ ranges, negated });
        i = close;
      } else current.push(c);
    }
    // `a**b` left an empty piece between the stars; pieces other than the first and last may not be empty.
    const kept = pieces.filter((p, i) => p.length || i === 0 || i === pieces.length - 1);
    return { pieces: kept, starred };
  });
  return { components, wildcards };
}

/** `pre{a,b}post` → `preapost`, `prebpost` (one level; at most MAX_ALTERNATIVES). */
function expandBraces(pattern: string): string[] {
  const open = pattern.indexOf('{');
  if (open < 0) return [pattern];
  const close = pattern.indexOf('}', open);
  if (close < 0) return [pattern];
  const inner = pattern.slice(open + 1, close);
  if (inner.includes('{')) throw invalidPattern('filePattern: braces may not nest');
  const rest = expandBraces(pattern.slice(close + 1));
  const out: string[] = [];
  for (const option of inner.split(','))
    for (const tail of rest) {
      out.push(pattern.slice(0, open) + option + tail);
      if (out.length > MAX_ALTERNATIVES)
        throw invalidPattern(`filePattern: braces expand to more than ${MAX_ALTERNATIVES} alternatives`);
    }
  return out;
}

/**
 * A case-insensitive matcher of file names for a glob, or `400 invalid_pattern` saying what is wrong with it:
 * longer than PATTERN_MAX_CHARS, more wildcards than PATTERN_MAX_WILDCARDS, extended globs, nested braces, too
 * many alternatives.
 */
export function compileGlob(pattern: string): (name: string) => boolean {
  const { patternMaxChars, patternMaxWildcards } = expressionLimits();
  if (pattern.length > patternMaxChars)
    throw invalidPattern(`filePattern is longer than ${patternMaxChars} characters (PATTERN_MAX_CHARS)`);
  if (/[+@!*?]\(/.test(pattern))
    throw invalidPattern('filePattern: extended globs (+(…), @(…), !(…), *(…), ?(…)) are not supported');
  const alternatives = expandBraces(pattern.toLowerCase()).map(parseAlternative);
  const wildcards = Math.max(...alternatives.map((a) => a.wildcards));
  if (wildcards > patternMaxWildcards)
    throw invalidPattern(
      `filePattern has ${wildcards} wildcards; at most ${patternMaxWildcards} (PATTERN_MAX_WILDCARDS)`,
    );
  return (name: string) => {
    const parts = name.toLowerCase().split('/');
    return alternatives.some(
      ({ components }) =>
        components.length === parts.length && components.every((c, i) => componentMatches(c, parts[i]!)),
    );
  };
}
