import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { parse } from 'yaml';
import { appHtml, uploadArtifact } from '@test/helpers/artifacts';
import { closeTestEnv, testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { ROOT } from '@test/helpers/paths';

/*
 * Every array a request body can carry has a maxItems, every open map a maxProperties (openapi.yaml), and the
 * API holds to them: read from the spec, each one is sent over its bound and must be refused with a 400 naming
 * the bound (and a 100,000-element array with a 4xx, never a 5xx). A field added without a bound fails the
 * first test.
 */

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: boolean | Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
};
type Operation = {
  operationId: string;
  security?: Array<Record<string, unknown>>;
  parameters?: Schema[];
  requestBody?: Schema;
};

const spec = parse(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8')) as {
  paths: Record<string, Record<string, Operation> & { parameters?: Schema[] }>;
};

function deref(s: Schema | undefined): Schema {
  let out = s ?? {};
  while (out.$ref) {
    const parts = out.$ref.replace('#/', '').split('/');
    out = parts.reduce<Record<string, unknown>>((o, k) => o[k] as Record<string, unknown>, spec);
  }
  return out;
}

/** A small value the schema accepts (required properties only), enough to reach a deeper property. */
function sample(raw: Schema | undefined): unknown {
  const s = deref(raw);
  if (s.enum) return (s.enum as unknown[])[0];
  if (s.default !== undefined) return s.default;
  const [alt] = s.allOf ?? s.oneOf ?? s.anyOf ?? [];
  if (alt && !s.type) return sample(alt);
  switch (s.type) {
    case 'object': {
      // An alternative of an object (one handler type, one condition kind) adds its required fields and narrows
      // their schemas.
      const narrowed = deref(alt);
      const properties = { ...s.properties, ...narrowed.properties };
      const required = [...new Set([...(s.required ?? []), ...(narrowed.required ?? [])])];
      return Object.fromEntries(required.map((k) => [k, sample(properties[k])]));
    }
    case 'array':
      return Array.from({ length: (s.minItems as number) ?? 0 }, () => sample(s.items));
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'string':
      if (s.format === 'email') return 'someone@example.com';
      if (s.format === 'uri') return 'https://example.com/';
      return 'x'.repeat((s.minLength as number) ?? 1);
    default:
      return {};
  }
}

interface BoundedField {
  operationId: string;
  method: string;
  path: string;
  appSession: boolean;
  /** property names from the body's root; '0' steps into an array's first element */
  at: string[];
  kind: 'array' | 'map';
  bound: number | undefined;
  body: Schema;
}

/** Every array and open map in every operation's JSON request body. */
function boundedFields(): BoundedField[] {
  const found: BoundedField[] = [];
  for (const [path, item] of Object.entries(spec.paths))
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object' || !('operationId' in op)) continue;
      const schema = deref(deref(op.requestBody).content?.['application/json' as never]?.['schema' as never]);
      const base = { operationId: op.operationId, method, path, body: schema };
      const appSession = (op.security ?? []).some((s) => 'appSession' in s);
      const walk = (raw: Schema | undefined, at: string[], seen: Set<string>) => {
        if (raw?.$ref) {
          if (seen.has(raw.$ref)) return;
          seen = new Set([...seen, raw.$ref]);
        }
        const s = deref(raw);
        for (const alt of [...(s.allOf ?? []), ...(s.oneOf ?? []), ...(s.anyOf ?? [])]) walk(alt, at, seen);
        if (s.type === 'array' || s.items) {
          found.push({ ...base, appSession, at, kind: 'array', bound: s.maxItems as number | undefined });
          walk(s.items, [...at, '0'], seen);
        }
        for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, [...at, k], seen);
        const open = s.additionalProperties !== false && !s.properties;
        if (
          s.type === 'object' &&
          (open || s.additionalProperties === true || typeof s.additionalProperties === 'object')
        )
          found.push({ ...base, appSession, at, kind: 'map', bound: s.maxProperties as number | undefined });
      };
      if (schema.type) walk(schema, [], new Set());
    }
  return found;
}

/** The body's sample with `value` placed at `at` (the objects and first elements on the way made). */
function bodyWith(field: BoundedField, value: unknown): unknown {
  if (field.at.length === 0) return value;
  const root = (sample(field.body) ?? {}) as Record<string, unknown>;
  let node: Record<string, unknown> = root;
  let schema = field.body;
  field.at.forEach((key, i) => {
    schema = deref(key === '0' ? deref(schema).items : deref(schema).properties?.[key]);
    if (i === field.at.length - 1) node[key] = value;
    else {
      if (typeof node[key] !== 'object' || node[key] === null) node[key] = sample(schema);
      if (deref(schema).type === 'array' && !(node[key] as unknown[]).length)
        (node[key] as unknown[]).push(sample(deref(schema).items));
      node = node[key] as Record<string, unknown>;
    }
  });
  return root;
}

describe('request arrays and maps are bounded (openapi.yaml maxItems / maxProperties)', function () {
  this.timeout(300_000);
  let env: TestEnv;
  let org: TestOrg;
  let app: { artifactId: string; token: string };
  const fields = boundedFields();

  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Request Limits Org');
    // An opened app, for the bridge operations (their credential is an app session).
    const artifact = await uploadArtifact(env, org, org.chat.token, {
      name: 'Limits app',
      content: appHtml({ tables: [{ table: 'notes', access: 'write' }] }),
    });
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${artifact.artifactId}/pin`))
      .expect(200);
    const opened = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${artifact.artifactId}/app-session`))
      .expect(201);
    const token = new URL(opened.body.url as string).searchParams.get('session')!;
    app = { artifactId: artifact.artifactId, token };
  });
  after(() => closeTestEnv());

  function send(field: BoundedField, body: unknown) {
    const url = field.path
      .replace('{organizationId}', org.organizationId)
      .replace('{artifactId}', field.appSession ? app.artifactId : 'art_none')
      // A table row id is an integer: anything else would be refused before the body is looked at.
      .replace('{id}', '1')
      .replace(/\{[^}]+\}/g, 'x1');
    const token = field.appSession ? app.token : org.owner.token;
    return request(env.app)
      [field.method as 'post']('' + url)
      .set('Authorization', `Bearer ${token}`)
      .send(body as object);
  }

  it('finds the request arrays and maps, and every one states its bound', () => {
    const names = fields.map((f) => `${f.operationId} ${f.kind} ${f.at.join('.') || '(body)'}`);
    // The walk reaches the fields a reader knows are there.
    expect(names).to.include.members([
      'insertTableRows array data',
      'createChain array steps',
      'insertTableRow map data',
      'runChain map payload',
    ]);
    const unbounded = fields.filter((f) => f.bound === undefined).map((f) => names[fields.indexOf(f)]);
    expect(unbounded, 'arrays without maxItems / maps without maxProperties').to.deep.equal([]);
  });

  for (const field of boundedFields().filter((f) => f.kind === 'array'))
    it(`${field.operationId}: ${field.at.join('.')} over maxItems is a 400; 100,000 elements a 4xx`, async () => {
      const over = await send(
        field,
        bodyWith(
          field,
          Array.from({ length: field.bound! + 1 }, () => 0),
        ),
      );
      expect(over.status, JSON.stringify(over.body)).to.equal(400);
      expect(JSON.stringify(over.body.error)).to.contain(`must NOT have more than ${field.bound} items`);
      const huge = await send(
        field,
        bodyWith(
          field,
          Array.from({ length: 100_000 }, () => 0),
        ),
      );
      expect(huge.status, JSON.stringify(huge.body)).to.be.within(400, 499);
    });

  for (const field of boundedFields().filter((f) => f.kind === 'map'))
    it(`${field.operationId}: ${field.at.join('.') || '(body)'} over maxProperties is a 400`, async () => {
      const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 0]));
      const over = await send(field, bodyWith(field, wide(field.bound! + 1)));
      expect(over.status, JSON.stringify(over.body)).to.equal(400);
      expect(JSON.stringify(over.body.error)).to.contain(`must NOT have more than ${field.bound} properties`);
      const huge = await send(field, bodyWith(field, wide(60_000)));
      expect(huge.status, JSON.stringify(huge.body)).to.be.within(400, 499);
    });
});
