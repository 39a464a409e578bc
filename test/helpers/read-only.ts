import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { openApiSpecPath } from '@lib/spec';

export interface Schema {
  $ref?: string;
  allOf?: Schema[];
  type?: string;
  enum?: unknown[];
  format?: string;
  readOnly?: boolean;
  properties?: Record<string, Schema>;
  items?: Schema;
}
type Json = Record<string, unknown>;
interface Doc {
  paths: Record<
    string,
    Record<string, { operationId?: string; requestBody?: { content: Record<string, { schema: Schema }> } }>
  >;
}

const doc = parse(readFileSync(openApiSpecPath(), 'utf8')) as Doc;

/** A schema with its references followed and a single `allOf` (how a read-only reference is written) merged in. */
function resolve(schema: Schema): Schema {
  if (schema.$ref) {
    const target = schema.$ref
      .split('/')
      .slice(1)
      .reduce<unknown>((o, k) => (o as Json)[k], doc) as Schema;
    return resolve(target);
  }
  if (schema.allOf?.length === 1) return { ...resolve(schema.allOf[0]!), ...schema, allOf: undefined };
  return schema;
}

/** The JSON request body schema of every PUT in openapi.yaml, by operationId. */
export function putBodies(): Map<string, Schema | undefined> {
  const bodies = new Map<string, Schema | undefined>();
  for (const item of Object.values(doc.paths)) {
    const put = item.put;
    if (put?.operationId) bodies.set(put.operationId, put.requestBody?.content['application/json']?.schema);
  }
  return bodies;
}

/** A value of the field's type the server never produced: what a careless or hostile client might send. */
function forgedScalar(schema: Schema, value: unknown): unknown {
  if (schema.enum) return schema.enum.find((v) => v !== value && v !== null);
  if (schema.type === 'boolean') return !value;
  if (schema.type === 'integer' || schema.type === 'number')
    return (typeof value === 'number' ? value : 0) + 7;
  if (schema.format === 'date-time') return '2001-02-03T04:05:06.000Z';
  if (schema.type === 'string') return `forged_${String(value)}`;
  return value;
}

/** `value` with every read-only field (at any depth the schema describes) given a forged value. */
export function forgeReadOnly(schema: Schema, value: unknown): unknown {
  const s = resolve(schema);
  if (Array.isArray(value) && s.items) return value.map((v) => forgeReadOnly(s.items!, v));
  if (!s.properties || typeof value !== 'object' || value === null) return value;
  const out: Json = { ...(value as Json) };
  for (const [key, prop] of Object.entries(s.properties)) {
    if (!(key in out)) continue;
    const p = resolve(prop);
    out[key] = p.readOnly ? forgedScalar(p, out[key]) : forgeReadOnly(p, out[key]);
  }
  return out;
}

/** Whether the schema marks any field read-only, at any depth. */
function hasReadOnly(schema: Schema, seen = new Set<Schema>()): boolean {
  const s = resolve(schema);
  if (seen.has(s)) return false;
  seen.add(s);
  if (s.items) return hasReadOnly(s.items, seen);
  return Object.values(s.properties ?? {}).some((p) => resolve(p).readOnly || hasReadOnly(p, seen));
}

/**
 * The read-only fields of `value` (at any depth), leaving out those named in `moving` by their dotted path from
 * the top (array items share their array's path: `steps.stepId`).
 */
export function readOnlyPart(schema: Schema, value: unknown, moving: ReadonlySet<string>, at = ''): unknown {
  const s = resolve(schema);
  if (Array.isArray(value) && s.items) return value.map((v) => readOnlyPart(s.items!, v, moving, at));
  if (!s.properties || typeof value !== 'object' || value === null) return undefined;
  const out: Json = {};
  for (const [key, prop] of Object.entries(s.properties)) {
    const path = at + key;
    const p = resolve(prop);
    if (!(key in (value as Json)) || moving.has(path) || !(p.readOnly || hasReadOnly(p))) continue;
    const part = p.readOnly
      ? (value as Json)[key]
      : readOnlyPart(p, (value as Json)[key], moving, `${path}.`);
    if (part !== undefined) out[key] = part;
  }
  return out;
}
