import { badRequest } from '@lib/errors';
import { columnPath, ROW_ID_PATH } from './storage';
import type { ColumnType } from './values';

export type SortSpec = Array<[string, 1 | -1]>;

/**
 * Reads `orderBy`: comma-separated `column:asc` / `column:desc` items (the direction may be left out: asc),
 * applied in order, on any field or `id`. `id` is always appended as the last key (unless named) so pages
 * are stable when values tie.
 */
export function parseOrderBy(
  orderBy: string | undefined,
  columns: ReadonlyMap<string, ColumnType>,
  pathOf: (column: string) => string = columnPath,
): SortSpec {
  const sort: SortSpec = [];
  const seen = new Set<string>();
  if (orderBy !== undefined && orderBy.trim() !== '') {
    orderBy.split(',').forEach((raw, i) => {
      const item = raw.trim();
      const parts = item.split(':');
      const column = (parts[0] ?? '').trim();
      const direction = (parts[1] ?? 'asc').trim().toLowerCase();
      const where = `orderBy item ${i + 1} ('${item}')`;
      if (!column || parts.length > 2) throw badRequest(`${where}: expected field:asc or field:desc`);
      if (!columns.has(column)) throw badRequest(`${where}: unknown field '${column}'`);
      if (direction !== 'asc' && direction !== 'desc') {
        throw badRequest(`${where}: direction must be asc or desc, got '${parts[1]}'`);
      }
      if (seen.has(column)) throw badRequest(`${where}: '${column}' is already ordered on`);
      seen.add(column);
      sort.push([pathOf(column), direction === 'asc' ? 1 : -1]);
    });
  }
  if (!sort.some(([path]) => path === ROW_ID_PATH)) sort.push([ROW_ID_PATH, 1]);
  return sort;
}
