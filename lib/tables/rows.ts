import type { TableFieldDoc } from './custom-table.schema';
import { defaultOf } from './definition';
import { ROW_ID_FIELD } from './limits';
import { storageKey, type StoredRow } from './storage';
import { toStorageValue, toWireValue } from './values';

/** One reason a row was refused; `field` is empty when the row as a whole is wrong. */
export interface RowProblem {
  field: string;
  message: string;
}

export type RowCheck = { ok: true; values: Record<string, unknown> } | { ok: false; problems: RowProblem[] };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

interface CompiledField {
  field: TableFieldDoc;
  /** The default in storage form, undefined when there is none. */
  storedDefault: unknown;
}

/**
 * Row rules of one table, prepared once per request (a batch checks up to 1000 rows with it): every key
 * must be a field and never `id`, values must match their field types, required fields cannot be null.
 */
export class RowChecker {
  private readonly byName: Map<string, CompiledField>;

  constructor(private readonly fields: TableFieldDoc[]) {
    this.byName = new Map(
      fields.map((field) => {
        const def = defaultOf(field);
        const stored = def === undefined ? undefined : toStorageValue(field.type, def);
        return [field.name, { field, storedDefault: stored?.ok ? stored.value : undefined }];
      }),
    );
  }

  /** A new row: defaults fill missing fields, a required field without one must be given, other missing
   * fields are stored as null. */
  insert(data: unknown): RowCheck {
    if (!isPlainObject(data))
      return { ok: false, problems: [{ field: '', message: 'a row must be a JSON object' }] };
    const problems = this.unknownKeys(data);
    const values: Record<string, unknown> = {};
    for (const { field, storedDefault } of this.byName.values()) {
      const given = Object.hasOwn(data, field.name) ? data[field.name] : undefined;
      const key = storageKey(field);
      if (given !== undefined) values[key] = this.value(field, given, problems);
      else if (storedDefault !== undefined) values[key] = storedDefault;
      else if (field.required) problems.push({ field: field.name, message: `'${field.name}' is required` });
      else values[key] = null;
    }
    return problems.length ? { ok: false, problems } : { ok: true, values };
  }

  /** A partial update: only the given fields change. */
  update(data: unknown): RowCheck {
    if (!isPlainObject(data))
      return { ok: false, problems: [{ field: '', message: 'data must be a JSON object' }] };
    const problems = this.unknownKeys(data);
    const values: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) {
      const compiled = this.byName.get(key);
      if (compiled && value !== undefined) {
        values[storageKey(compiled.field)] = this.value(compiled.field, value, problems);
      }
    }
    if (!problems.length && Object.keys(values).length === 0) {
      problems.push({ field: '', message: 'data must name at least one field to change' });
    }
    return problems.length ? { ok: false, problems } : { ok: true, values };
  }

  /** A stored row as the API returns it: `id` first, then every field in definition order (null when unset). */
  view(row: StoredRow): Record<string, unknown> {
    const out: Record<string, unknown> = { id: row._id };
    const data = row.d ?? {};
    for (const field of this.fields) out[field.name] = toWireValue(field.type, data[storageKey(field)]);
    return out;
  }

  private unknownKeys(data: Record<string, unknown>): RowProblem[] {
    const problems: RowProblem[] = [];
    for (const key of Object.keys(data)) {
      if (this.byName.has(key)) continue;
      problems.push(
        key === ROW_ID_FIELD
          ? { field: key, message: "'id' must not be supplied: it is generated" }
          : { field: key, message: `'${key}' is not a field of this table` },
      );
    }
    return problems;
  }

  private value(field: TableFieldDoc, value: unknown, problems: RowProblem[]): unknown {
    if (value === null) {
      if (field.required)
        problems.push({ field: field.name, message: `'${field.name}' is required and cannot be null` });
      return null;
    }
    const coerced = toStorageValue(field.type, value);
    if (!coerced.ok) problems.push({ field: field.name, message: `'${field.name}' ${coerced.error}` });
    return coerced.ok ? coerced.value : null;
  }
}

export function describeProblems(problems: RowProblem[]): string {
  return problems.map((p) => p.message).join('; ');
}
