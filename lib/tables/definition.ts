import type { FieldType, TableFieldDoc } from './custom-table.schema';
import { FIELD_TYPES } from './custom-table.schema';
import { badRequest } from '@lib/errors';
import { NAME_PATTERN, ROW_ID_FIELD, TABLE_LIMITS } from './limits';
import { toStorageValue } from './values';

export interface FieldInput {
  name: string;
  type: FieldType;
  required: boolean;
  default?: unknown;
  comments: string;
}

export interface FieldView {
  name: string;
  type: FieldType;
  required: boolean;
  default?: unknown;
  comments: string;
  ddFieldName: string | null;
}

/** Checks a table, field or column name; `what` names it in the message. */
export function checkName(name: unknown, what: string): string {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw badRequest(`${what} must consist of letters, digits and underscores only`);
  }
  if (name.length > TABLE_LIMITS.maxNameLength) {
    throw badRequest(`${what} must be at most ${TABLE_LIMITS.maxNameLength} characters`);
  }
  return name;
}

/** Checks a field or column name, which also may not be the reserved `id`. */
export function checkFieldName(name: unknown, what: string): string {
  checkName(name, what);
  if (name === ROW_ID_FIELD) throw badRequest(`${what} 'id' is reserved for the generated row id`);
  // JavaScript gives this key a special meaning on plain objects; no row could carry it safely.
  if (name === '__proto__') throw badRequest(`${what} '__proto__' is reserved`);
  return name as string;
}

/** Validates the fields of a new table and returns them in stored form. */
export function normalizeFields(inputs: FieldInput[]): TableFieldDoc[] {
  if (!Array.isArray(inputs) || inputs.length === 0) throw badRequest('fields must hold at least one field');
  if (inputs.length > TABLE_LIMITS.maxFields) {
    throw badRequest(`a table has at most ${TABLE_LIMITS.maxFields} fields; got ${inputs.length}`);
  }
  const seen = new Set<string>();
  return inputs.map((input, i) => {
    const name = checkFieldName(input.name, `fields[${i}].name`);
    if (seen.has(name)) throw badRequest(`fields[${i}].name '${name}' is defined twice`);
    seen.add(name);
    if (!FIELD_TYPES.includes(input.type)) {
      throw badRequest(`fields[${i}].type of '${name}' must be one of ${FIELD_TYPES.join(', ')}`);
    }
    return {
      name,
      key: name,
      type: input.type,
      required: input.required === true,
      defaultJson: defaultJson(input, `fields[${i}].default of '${name}'`),
      comments: typeof input.comments === 'string' ? input.comments : '',
      ddFieldName: null,
    };
  });
}

/** A default in its wire form as JSON text, or null when there is none. */
function defaultJson(input: FieldInput, what: string): string | null {
  if (input.default === undefined || input.default === null) return null;
  const coerced = toStorageValue(input.type, input.default);
  if (!coerced.ok) throw badRequest(`${what} ${coerced.error}`);
  if (coerced.value instanceof Date) return JSON.stringify(coerced.value.toISOString());
  // jsonb storage form is already canonical JSON text.
  return input.type === 'jsonb' ? (coerced.value as string) : JSON.stringify(coerced.value);
}

export function defaultOf(field: TableFieldDoc): unknown {
  return field.defaultJson == null ? undefined : (JSON.parse(field.defaultJson) as unknown);
}

export function toFieldView(field: TableFieldDoc): FieldView {
  const def = defaultOf(field);
  return {
    name: field.name,
    type: field.type,
    required: field.required,
    ...(def === undefined ? {} : { default: def }),
    comments: field.comments,
    ddFieldName: field.ddFieldName ?? null,
  };
}
