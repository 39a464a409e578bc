import { expect } from 'chai';
import type { RequestHandler } from 'express';
import { narrowValidatorRouteLookup } from '@api/validator/route-lookup';
import { cacheValidatorRouteMatchers } from '@api/validator/route-matchers';
import { openApiSpecPath } from '@lib/spec';
import { validatorRequire } from '@api/validator/internals';

// The validator's own pieces, as its middleware() assembles them (express-openapi-validator 5.6.2).
type Build = (context: unknown, responseApiDoc: unknown) => RequestHandler;
const { OpenApiSpecLoader } = validatorRequire('./framework/openapi.spec.loader') as {
  OpenApiSpecLoader: new (opts: { apiDoc: string }) => {
    load(): Promise<{ routes: Array<{ expressRoute: string; method: string }>; apiDoc: unknown }>;
  };
};
const { OpenApiContext } = validatorRequire('./framework/openapi.context') as {
  OpenApiContext: new (
    spec: unknown,
    ignorePaths: unknown,
    ignoreUndocumented: boolean,
    useUrl: boolean,
  ) => object;
};
const { applyOpenApiMetadata } = validatorRequire('./middlewares/openapi.metadata') as {
  applyOpenApiMetadata: Build;
};

/** What a metadata middleware made of one request: the route it found and its parameters, or its error. */
function outcome(handler: RequestHandler, method: string, url: string) {
  const path = url.split('?')[0]!;
  const req = { method, url, originalUrl: url, path, baseUrl: '', params: {}, app: { enabled: () => false } };
  let error: { status?: number; message?: string } | undefined;
  try {
    handler(req as never, {} as never, (err?: unknown) => {
      if (err) error = err;
    });
  } catch (err) {
    error = err as typeof error;
  }
  const openapi = (req as { openapi?: Record<string, unknown> }).openapi;
  return {
    route: openapi && [openapi.expressRoute, openapi.openApiRoute, openapi.schema, openapi._responseSchema],
    params: req.params,
    error: error && { status: error.status, message: error.message },
  };
}

describe('narrowed route lookup of the request validator', () => {
  let original: RequestHandler;
  let routes: Array<{ expressRoute: string; method: string }>;
  let built = 0;
  let lastGroupSize = 0;

  let context: unknown;
  let responseApiDoc: unknown;
  const build: Build = (ctx, doc) => {
    built++;
    lastGroupSize = Object.keys((ctx as { expressRouteMap: object }).expressRouteMap).length;
    return applyOpenApiMetadata(ctx, doc);
  };
  /** A narrowed lookup built the way the app builds it, with no group built yet. */
  function narrowedLookup(): RequestHandler {
    const validator = { metadataMiddleware: build };
    narrowValidatorRouteLookup({ _oav: validator });
    return validator.metadataMiddleware(context, responseApiDoc);
  }

  before(async () => {
    cacheValidatorRouteMatchers(); // as the app does; it only makes the full search faster
    const spec = await new OpenApiSpecLoader({ apiDoc: openApiSpecPath() }).load();
    routes = spec.routes;
    context = new OpenApiContext(spec, undefined, false, false);
    responseApiDoc = spec.apiDoc;
    original = build(context, responseApiDoc);
  });

  /** Concrete paths for every documented route, and near misses around each. */
  function requests(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    for (const { expressRoute } of routes) {
      const path = expressRoute.replace(/:([A-Za-z0-9_]+)/g, 'v_$1').replace(/\\:/g, ':');
      const variants = [
        path,
        `${path}/`,
        `${path}?limit=5`,
        path.toUpperCase(),
        `${path}/extra`,
        path.replace(/\/[^/]*$/, ''),
        path.replace(/v_[A-Za-z0-9_]+/, 'a%2Fb'),
        path.replace(/v_[A-Za-z0-9_]+/, '%E0%A4%A'),
        path.replace(/\//g, '//'),
        `/elsewhere${path}`,
      ];
      for (const method of methods) for (const v of variants) out.push([method, v]);
    }
    return out;
  }

  it('finds the same route, parameters and errors as the full search, for every documented route', () => {
    const narrowed = narrowedLookup();
    const all = requests();
    expect(all.length).to.be.greaterThan(5000);
    let matched = 0;
    for (const [method, url] of all) {
      const want = outcome(original, method, url);
      expect(outcome(narrowed, method, url), `${method} ${url}`).to.deep.equal(want);
      if (want.route) matched++;
    }
    // The comparison covers routes found as well as refusals (405, 404, a malformed path).
    expect(matched).to.be.greaterThan(routes.length);
  });

  it('searches a small group of routes per request and builds each group once', () => {
    const all = new Set(routes.map((r) => r.expressRoute)).size;
    const narrowed = narrowedLookup();
    const before = built;
    outcome(narrowed, 'GET', '/orgs/o1/chains/c1/steps');
    outcome(narrowed, 'GET', '/orgs/o2/chains/c2/steps');
    expect(built - before).to.equal(1);
    expect(lastGroupSize).to.be.within(1, 10);
    expect(all).to.be.greaterThan(90);
    // Unknown literals and segment counts share a bounded set of groups (one per documented segment count, one
    // for any other), however many distinct paths arrive.
    const after = built;
    for (let i = 0; i < 200; i++) outcome(narrowed, 'GET', `/nowhere-${i}/x/y-${i}/${'a/'.repeat(i % 40)}z`);
    expect(built - after).to.be.within(2, 10);
  });
});
