import { badRequest } from './errors';

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Page<T> {
  items: T[];
  totalRows: number;
  offset: number;
}

/** Reads `limit` and `cursor` (the numeric offset) from an already-validated query. */
export function pageRequest(query: { limit?: unknown; cursor?: unknown }, defaultLimit = 20): PageRequest {
  const limit = query.limit === undefined ? defaultLimit : Number(query.limit);
  const offset = query.cursor === undefined ? 0 : Number(query.cursor);
  return { limit, offset };
}

export function page<T>(items: T[], totalRows: number, offset: number): Page<T> {
  return { items, totalRows, offset };
}

/** Escapes user text for use inside a case-insensitive substring regex. A NUL character cannot be part of a
 * stored name and the database refuses it in a pattern: it is a 400, not a failed query. */
export function containsPattern(text: string): RegExp {
  if (text.includes('\0')) throw badRequest('q must not contain NUL characters');
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
}

/** `field` or `field:asc|desc` (validated by openapi.yaml) → the field and its direction; `fallback` when absent. */
export function parseOrderBy<F extends string>(orderBy: string | undefined, fallback: F) {
  const [field, direction] = (orderBy ?? fallback).split(':');
  return { orderBy: (field || fallback) as F, descending: direction === 'desc' };
}
