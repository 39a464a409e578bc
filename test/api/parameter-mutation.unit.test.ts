import { expect } from 'chai';
import { skipNoopParameterMutation } from '@api/validator/parameter-mutation';
import { validatorRequire } from '@api/validator/internals';

// The validator's own mutator and request ajv (express-openapi-validator 5.6.2).
type Req = {
  originalUrl: string;
  query: Record<string, unknown>;
  params: Record<string, unknown>;
  headers: Record<string, string>;
  openapi: { schema: { parameters: unknown[] } };
};
type Mutator = { modifyRequest: (this: Mutator, req: Req) => void };
const { RequestParameterMutator } = validatorRequire('./middlewares/parsers/req.parameter.mutator') as {
  RequestParameterMutator: {
    new (ajv: unknown, apiDoc: unknown, path: string, parsed: unknown): Mutator;
    prototype: Mutator;
  };
};
const { createRequestAjv } = validatorRequire('./framework/ajv') as {
  createRequestAjv: (apiDoc: unknown, options: object) => unknown;
};

const apiDoc = {
  openapi: '3.0.3',
  info: { title: 'mutation', version: '1' },
  paths: {},
  components: {
    schemas: {},
    parameters: {
      Id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    },
  },
};
const ids = { name: 'ids', in: 'path', required: true, schema: { type: 'array', items: { type: 'string' } } };
const filter = {
  name: 'filter',
  in: 'query',
  style: 'deepObject',
  schema: { type: 'object', properties: { kind: { type: 'string', default: 'all' } } },
};
const limit = { name: 'limit', in: 'query', schema: { type: 'integer', default: 20 } };
const express = { style: 'simple', explode: false };

describe('skipping the request validator parameter mutation where it changes nothing', () => {
  let original: Mutator['modifyRequest'];
  let originalCalls = 0;
  let mutator: Mutator;

  before(() => {
    const modify = RequestParameterMutator.prototype.modifyRequest;
    original = modify;
    // Counts what reaches the validator's own code once the skip is installed in front of it.
    RequestParameterMutator.prototype.modifyRequest = function (this: Mutator, req: Req) {
      originalCalls++;
      modify.call(this, req);
    };
    skipNoopParameterMutation();
    const ajv = createRequestAjv(apiDoc, { coerceTypes: true, formats: {} });
    const parsed = { query: {}, headers: {}, params: {}, cookies: {}, body: {} };
    mutator = new RequestParameterMutator(ajv, apiDoc, '/things', parsed);
  });
  after(() => {
    RequestParameterMutator.prototype.modifyRequest = original;
  });

  /** A request as Express hands it over: its query already parsed by the query parser, path parameters matched. */
  function request(url: string, parameters: unknown[], params: Record<string, unknown>): Req {
    const query = Object.fromEntries(new URLSearchParams(url.split('?')[1] ?? ''));
    return { originalUrl: url, query, params, headers: {}, openapi: { schema: { parameters } } };
  }

  /** What the installed mutation and the validator's own make of the same request, and whether it was skipped. */
  function both(url: string, parameters: unknown[], params: Record<string, unknown> = {}) {
    const viaOwn = request(url, parameters, { ...params });
    original.call(mutator, viaOwn);
    const viaPatched = request(url, parameters, { ...params });
    const before = originalCalls;
    mutator.modifyRequest(viaPatched);
    return { own: viaOwn, patched: viaPatched, skipped: originalCalls === before };
  }

  it('skips a request without a query string to an operation with scalar path parameters only', () => {
    const r = both('/things/t1', [{ $ref: '#/components/parameters/Id' }], { id: 't1' });
    expect(r.skipped).to.equal(true);
    expect(r.patched).to.deep.equal(r.own);
  });

  it('does not skip an array path parameter, which the validator splits', () => {
    const r = both('/things/a,b', [{ ...ids, ...express }], { ids: 'a,b' });
    expect(r.own.params.ids).to.deep.equal(['a', 'b']);
    expect(r.skipped).to.equal(false);
    expect(r.patched).to.deep.equal(r.own);
  });

  it('does not skip an operation with query parameters, even without a query string', () => {
    const deep = both('/things/t1', [{ $ref: '#/components/parameters/Id' }, filter], { id: 't1' });
    expect(deep.own.query).to.deep.equal({ filter: { kind: 'all' } });
    expect(deep.skipped).to.equal(false);
    expect(deep.patched).to.deep.equal(deep.own);
    const scalar = both('/things/t1', [{ $ref: '#/components/parameters/Id' }, limit], { id: 't1' });
    expect(scalar.skipped).to.equal(false);
    expect(scalar.patched).to.deep.equal(scalar.own);
  });

  it('does not skip a request with a query string', () => {
    const r = both('/things/t1?a[b]=1', [{ $ref: '#/components/parameters/Id' }], { id: 't1' });
    expect(r.own.query).to.not.deep.equal({ 'a[b]': '1' });
    expect(r.skipped).to.equal(false);
    expect(r.patched).to.deep.equal(r.own);
  });
});
