import type { FieldType } from './custom-table.schema';
import { parseIsoTimestamp } from './timestamp';

/** The type of a column a filter or sort can name: a field type, or the generated integer row `id`. */
export type ColumnType = FieldType | 'id';

export type Coerced = { ok: true; value: unknown } | { ok: false; error: string };

const ok = (value: unknown): Coerced => ({ ok: true, value });
const fail = (error: string): Coerced => ({ ok: false, error });

/** JSON text with object keys sorted at every level, so equal jsonb values have equal text. Written
 * directly (no sorted copy of the value): it runs for every jsonb value of every inserted row. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const src = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(src).sort()) {
    const v = src[key];
    if (v !== undefined && typeof v !== 'function') parts.push(`${JSON.stringify(key)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * A row value as received in JSON, checked against the field type and turned into its storage form:
 * timestamps become Dates (they compare and sort as instants), jsonb becomes canonical JSON text (no
 * user-chosen keys ever reach the store as document keys). `null` is handled by the caller.
 */
export function toStorageValue(type: FieldType, value: unknown): Coerced {
  switch (type) {
    case 'text':
      return typeof value === 'string' ? ok(value) : fail('must be a string (text)');
    case 'numeric':
      return typeof value === 'number' && Number.isFinite(value)
        ? ok(value)
        : fail('must be a number (numeric)');
    case 'boolean':
      return typeof value === 'boolean' ? ok(value) : fail('must be true or false (boolean)');
    case 'timestamp': {
      const date = typeof value === 'string' ? parseIsoTimestamp(value) : null;
      return date ? ok(date) : fail('must be an ISO 8601 timestamp string (timestamp)');
    }
    case 'jsonb':
      return value === undefined ? fail('must be a JSON value (jsonb)') : ok(canonicalJson(value));
  }
}

/** A stored value in its wire form: timestamps as ISO 8601 UTC strings, jsonb as JSON. */
export function toWireValue(type: FieldType, stored: unknown): unknown {
  if (stored === null || stored === undefined) return null;
  if (type === 'timestamp' && stored instanceof Date) return stored.toISOString();
  if (type === 'jsonb' && typeof stored === 'string') return JSON.parse(stored) as unknown;
  return stored;
}

const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A scalar from a `filters` value, read according to the column's type. */
export function parseFilterScalar(type: ColumnType, text: string): Coerced {
  switch (type) {
    case 'text':
      return ok(text);
    case 'numeric': {
      const t = text.trim();
      return NUMBER_TEXT.test(t) && Number.isFinite(Number(t))
        ? ok(Number(t))
        : fail(`'${text}' is not a number`);
    }
    case 'id': {
      const t = text.trim();
      return /^\d{1,16}$/.test(t) && Number.isSafeInteger(Number(t))
        ? ok(Number(t))
        : fail(`'${text}' is not an integer id`);
    }
    case 'boolean': {
      const t = text.trim().toLowerCase();
      return t === 'true' || t === 'false' ? ok(t === 'true') : fail(`'${text}' is not true or false`);
    }
    case 'timestamp': {
      const date = parseIsoTimestamp(text);
      return date ? ok(date) : fail(`'${text}' is not an ISO 8601 timestamp`);
    }
    case 'jsonb':
      // JSON text compares as canonical JSON; anything else is taken as a JSON string.
      try {
        return ok(canonicalJson(JSON.parse(text)));
      } catch {
        return ok(JSON.stringify(text));
      }
  }
}
