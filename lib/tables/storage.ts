import { createHash } from 'node:crypto';

/**
 * Physical layout of rows. Every table has its own collection, so a scan (the embedded database answers
 * every query but `_id`/unique equality with one) only ever reads that table's rows, dropping a table is one drop, and the
 * per-field indexes of one table do not weigh on another. A row is `{ _id: <row id>, d: { <field>: value } }`:
 * nesting the fields keeps any legal field name (even `_id`) clear of the document's own keys.
 */
export const ROW_ID_PATH = '_id';

export function rowsCollectionName(tableId: string): string {
  return `table_rows_${tableId}`;
}

/** Path of a field's value inside a row document. Field names are validated ([A-Za-z0-9_]+): no `$`, no `.`. */
export function fieldPath(field: string): string {
  return `d.${field}`;
}

/** The key a field's value is stored under (see TableFieldDoc.key). */
export function storageKey(field: { name: string; key?: string | null }): string {
  return field.key ?? field.name;
}

/** Path of `id` or a field (by its storage key), as used in filters and sorts. */
export function columnPath(column: string): string {
  return column === 'id' ? ROW_ID_PATH : fieldPath(column);
}

/** Maps the column names of a table to their document paths. */
export function columnPaths(
  fields: ReadonlyArray<{ name: string; key?: string | null }>,
): (column: string) => string {
  const keys = new Map(fields.map((f) => [f.name, storageKey(f)]));
  return (column) => columnPath(keys.get(column) ?? column);
}

/** Index names that differ case-insensitively, so they are portable to stores that fold case: `Email` and
 * `email` are different fields, so the exact name's hash disambiguates. */
export function fieldIndexName(field: string): string {
  return `by_${field.toLowerCase()}_${createHash('sha1').update(field).digest('hex').slice(0, 8)}`;
}

/** A stored row: `d` holds values in storage form (timestamps as Date, jsonb as JSON text). */
export interface StoredRow {
  _id: number;
  d: Record<string, unknown>;
}
