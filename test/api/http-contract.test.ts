import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { parse } from 'yaml';
import { openApiSpecPath } from '@lib/spec';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';

interface Parameter {
  in: string;
  name: string;
  $ref?: string;
  schema?: { type?: string };
}
type Operation = { parameters?: Parameter[] };
interface Doc {
  paths: Record<string, Record<string, Operation | Parameter[]>>;
  components: { parameters: Record<string, Parameter> };
}

const doc = parse(readFileSync(openApiSpecPath(), 'utf8')) as Doc;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
const deref = (p: Parameter) => (p.$ref ? doc.components.parameters[p.$ref.replace(/^.+\//, '')]! : p);
const declared = (item: Doc['paths'][string]) => METHODS.filter((m) => m in item);
/** A concrete URL of a documented path: the organization given, `nope` for other ids, `values` where named. */
const fill = (path: string, organizationId: string, values: Record<string, string> = {}) =>
  path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    name === 'organizationId' ? organizationId : (values[name] ?? 'nope'),
  );

describe('the HTTP contract', () => {
  let env: TestEnv;
  let org: TestOrg;
  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Contract Org');
  });

  it('RFC 9110: a 405 response carries an Allow header listing the methods the path declares', async () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      const allowed = declared(item);
      const method = ['patch', 'put', 'delete', 'post'].find((m) => !allowed.includes(m));
      if (!method) continue;
      const url = fill(path, org.organizationId);
      const res = await request(env.app)
        [method as 'patch'](url)
        .set('Authorization', `Bearer ${org.owner.token}`);
      expect(res.status, `${method} ${path}`).to.equal(405);
      expect(res.body.error?.code, `${method} ${path}`).to.equal('method_not_allowed');
      const header = String(res.headers.allow ?? '');
      expect(header.split(/,\s*/).sort(), `Allow of ${path}`).to.deep.equal(
        allowed.map((m) => m.toUpperCase()).sort(),
      );
    }
  });

  it('RFC 9110: OPTIONS answers with an Allow header naming every method the path declares, a body or not', async () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      // An app's bridge answers OPTIONS as a CORS preflight for the app's frame (api/routes/apps.ts).
      if (path.includes('/app/')) continue;
      const url = fill(path, org.organizationId);
      for (const body of [undefined, '{}']) {
        const req = request(env.app).options(url).set('Authorization', `Bearer ${org.owner.token}`);
        const res = await (body ? req.set('Content-Type', 'application/json').send(body) : req);
        const advertised = String(res.headers.allow ?? '')
          .split(/,\s*/)
          .filter((m) => m && m !== 'HEAD' && m !== 'OPTIONS');
        expect(advertised.sort(), `OPTIONS ${path} (body: ${body ?? 'none'})`).to.deep.equal(
          declared(item)
            .map((m) => m.toUpperCase())
            .sort(),
        );
      }
    }
  });

  it('RFC 9110: a method the path does not declare is 405 with Allow even with a body that is not JSON', async () => {
    const path = '/orgs/{organizationId}/webhooks/{webhookId}/execute';
    const res = await request(env.app)
      .trace(fill(path, org.organizationId))
      .set('Content-Type', 'application/json')
      .send('{not json');
    expect(res.status).to.equal(405);
    expect(res.body.error.code).to.equal('method_not_allowed');
    expect(res.headers.allow).to.equal('POST');
    // POST and PUT bodies are parsed, but only where the path declares the method.
    for (const [path, item] of Object.entries(doc.paths)) {
      const allowed = declared(item);
      for (const method of (['put', 'post'] as const).filter((m) => !allowed.includes(m))) {
        const res = await request(env.app)
          [method](fill(path, org.organizationId))
          .set('Authorization', `Bearer ${org.owner.token}`)
          .set('Content-Type', 'application/json')
          .send('{not json');
        expect(res.status, `${method} ${path}`).to.equal(405);
        expect(res.headers.allow?.split(/,\s*/).sort(), `Allow of ${path}`).to.deep.equal(
          allowed.map((m) => m.toUpperCase()).sort(),
        );
      }
    }
  });

  it('a parameter the contract types as integer is refused (400) unless written as an integer: cursor=0.0, 1e2, 0x10', async () => {
    // One read (or delete) per integer parameter: ids that name nothing answer 404 once the parameters are valid.
    const cases = new Map<string, { method: 'get' | 'delete'; path: string; parameter: Parameter }>();
    for (const [path, item] of Object.entries(doc.paths)) {
      const shared = (item.parameters as Parameter[] | undefined) ?? [];
      for (const method of ['get', 'delete'] as const) {
        const op = item[method] as Operation | undefined;
        for (const parameter of [...shared, ...(op?.parameters ?? [])].map(deref)) {
          const key = `${parameter.in}:${parameter.name}`;
          if (op && parameter.schema?.type === 'integer' && !cases.has(key))
            cases.set(key, { method, path, parameter });
        }
      }
    }
    expect([...cases.keys()]).to.include.members(['query:cursor', 'query:limit', 'path:id']);
    for (const { method, path, parameter } of cases.values()) {
      const url = (value: string) => {
        const filled = fill(
          path,
          org.organizationId,
          parameter.in === 'path' ? { [parameter.name]: value } : {},
        );
        return parameter.in === 'query' ? `${filled}?${parameter.name}=${encodeURIComponent(value)}` : filled;
      };
      const client = as(env, org.owner.token);
      const valid = await client[method](url('1'));
      expect(valid.status, `${method} ${url('1')}: ${JSON.stringify(valid.body)}`).to.not.equal(400);
      for (const written of ['0.0', '1.0', '1e2', '0x10', ' 5']) {
        const res = await client[method](url(written));
        expect(res.status, `${method} ${url(written)}`).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
        expect(res.body.error.details).to.deep.equal([
          { path: `/${parameter.in}/${parameter.name}`, message: 'must be integer' },
        ]);
      }
    }
  });
});
