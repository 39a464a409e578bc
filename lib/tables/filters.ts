import { badRequest } from '@lib/errors';
import { columnPath } from './storage';
import { parseFilterScalar, type ColumnType } from './values';

export const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'like', 'ilike', 'in', 'nin'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];
export type FilterJoin = 'and' | 'or';

export const MAX_FILTER_SEGMENTS = 50;
export const MAX_IN_VALUES = 1000;

export interface FilterSegment {
  column: string;
  operator: FilterOperator;
  value: string;
  join: FilterJoin;
}

/** Which operators make sense for which column type. */
const OPERATORS_BY_TYPE: Record<ColumnType, readonly FilterOperator[]> = {
  text: FILTER_OPERATORS,
  numeric: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'nin'],
  timestamp: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'nin'],
  id: ['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'in', 'nin'],
  boolean: ['eq', 'ne', 'in', 'nin'],
  jsonb: ['eq', 'ne', 'like', 'ilike', 'in', 'nin'],
};

const JOIN_SUFFIX = /:(and|or)$/i;

/**
 * Splits `filters` into segment texts. With `|||` anywhere, `|||` is the only separator. Otherwise the
 * legacy comma form applies: a comma ends a segment only where the text before it ends in `:and` or `:or`,
 * so comma-separated `in`/`nin` lists (and commas inside values) survive. A value item that itself ends in
 * `:and`/`:or` before a comma is the one ambiguity left: use `|||` for those.
 */
export function splitFilterSegments(filters: string): string[] {
  if (filters.includes('|||')) return filters.split('|||');
  const segments: string[] = [];
  let current: string[] = [];
  for (const token of filters.split(',')) {
    current.push(token);
    if (JOIN_SUFFIX.test(token)) {
      segments.push(current.join(','));
      current = [];
    }
  }
  if (current.length) segments.push(current.join(','));
  return segments;
}

function segmentError(index: number, text: string, problem: string) {
  const shown = text.length > 120 ? `${text.slice(0, 117)}...` : text;
  return badRequest(`filters segment ${index + 1} ('${shown}'): ${problem}`, { segment: index + 1 });
}

/** Reads `field:operator:value:join`. The value is everything between the second and the last colon, so it
 * may contain colons (timestamps). */
export function parseFilterSegment(text: string, index: number): FilterSegment {
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  const last = text.lastIndexOf(':');
  if (first < 0 || second < 0 || last <= second) {
    throw segmentError(
      index,
      text,
      'expected field:operator:value:join; every segment needs its join (and/or)',
    );
  }
  const join = text.slice(last + 1).toLowerCase();
  if (join !== 'and' && join !== 'or') {
    throw segmentError(index, text, `join must be 'and' or 'or', got '${text.slice(last + 1)}'`);
  }
  const column = text.slice(0, first).trim();
  const operator = text
    .slice(first + 1, second)
    .trim()
    .toLowerCase();
  if (!column) throw segmentError(index, text, 'the field name is empty');
  if (!(FILTER_OPERATORS as readonly string[]).includes(operator)) {
    throw segmentError(
      index,
      text,
      `unknown operator '${operator}'; use one of ${FILTER_OPERATORS.join(', ')}`,
    );
  }
  return { column, operator: operator as FilterOperator, value: text.slice(second + 1, last), join };
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * like/ilike: a contains-match where every run of spaces is a wildcard; the text is escaped, never a regex.
 * With wildcards, each part is found at its first place after the one before, in an atomic group anchored at the
 * start: `^(?>[\s\S]*?a)(?>[\s\S]*?b)`. The first place is never worse, so nothing is tried twice; the plain
 * `a[\s\S]*b[\s\S]*c` backtracks over every split of a long value that does not match (its cost grows with the
 * value's length to the power of the wildcards), and the database cannot stop a match once it started.
 */
export function likePattern(value: string): string {
  const parts = value
    .split(' ')
    .filter((part) => part.length > 0)
    .map(escapeRegex);
  if (parts.length <= 1) return parts.join('');
  return `^${parts.map((part) => `(?>[\\s\\S]*?${part})`).join('')}`;
}

function condition(
  segment: FilterSegment,
  type: ColumnType,
  index: number,
  text: string,
  pathOf: (column: string) => string,
): Record<string, unknown> {
  if (!OPERATORS_BY_TYPE[type].includes(segment.operator)) {
    throw segmentError(
      index,
      text,
      `operator '${segment.operator}' does not apply to ${type} field '${segment.column}'`,
    );
  }
  const scalar = (raw: string) => {
    const parsed = parseFilterScalar(type, raw);
    if (!parsed.ok) throw segmentError(index, text, `${parsed.error} for ${type} field '${segment.column}'`);
    return parsed.value;
  };
  const path = pathOf(segment.column);
  switch (segment.operator) {
    case 'like':
    case 'ilike':
      return {
        [path]: { $regex: likePattern(segment.value), $options: segment.operator === 'ilike' ? 'i' : '' },
      };
    case 'in':
    case 'nin': {
      const items = segment.value.split(',');
      if (items.length > MAX_IN_VALUES) throw segmentError(index, text, `at most ${MAX_IN_VALUES} values`);
      return { [path]: { [`$${segment.operator}`]: items.map(scalar) } };
    }
    default:
      return { [path]: { [`$${segment.operator}`]: scalar(segment.value) } };
  }
}

/**
 * Turns `filters` into a query. Joins apply left to right without brackets: s1 j2 s2 j3 s3 is
 * ((s1 j2 s2) j3 s3); the first segment's join is ignored. Field paths come from the table definition and
 * values are typed scalars or escaped patterns, so no caller text becomes an operator or a raw regex.
 */
export function buildRowFilter(
  filters: string | undefined,
  columns: ReadonlyMap<string, ColumnType>,
  pathOf: (column: string) => string = columnPath,
): Record<string, unknown> {
  if (filters === undefined || filters.trim() === '') return {};
  const texts = splitFilterSegments(filters);
  if (texts.length > MAX_FILTER_SEGMENTS)
    throw badRequest(`filters may hold at most ${MAX_FILTER_SEGMENTS} segments`);
  let query: Record<string, unknown> | undefined;
  texts.forEach((text, index) => {
    const segment = parseFilterSegment(text, index);
    const type = columns.get(segment.column);
    if (!type) throw segmentError(index, text, `unknown field '${segment.column}'`);
    const cond = condition(segment, type, index, text, pathOf);
    if (!query) {
      query = cond;
      return;
    }
    const op = `$${segment.join}`;
    const chain = query[op];
    // Same join as the previous step: extend its list instead of nesting ((a or b) or c = a or b or c).
    if (Object.keys(query).length === 1 && Array.isArray(chain)) chain.push(cond);
    else query = { [op]: [query, cond] };
  });
  return query ?? {};
}
