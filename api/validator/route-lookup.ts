import type { RequestHandler } from 'express';

/** The parts of the validator's OpenApiContext (express-openapi-validator 5.6.2) this module relies on. */
interface ValidatorContext {
  expressRouteMap: Record<string, unknown>;
}
interface Validator {
  metadataMiddleware(context: ValidatorContext, responseApiDoc: unknown): RequestHandler;
}

/** A route's path segments: a lower-cased literal, or null where anything may match (a parameter). */
type Shape = { wildcard: true } | { wildcard: false; segments: (string | null)[] };

// Segments that are plain text in every route the validator builds from an OpenAPI path; anything else
// (`:param`, an escaped colon, a wildcard or group) is treated as "may match anything".
const LITERAL = /^[A-Za-z0-9._~-]*$/;

function segmentsOf(path: string): string[] {
  // Routing is not strict: one trailing slash is allowed, as path-to-regexp's `trailing` option allows it.
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}

function shapeOf(expressRoute: string): Shape {
  if (/[*?+(){}]/.test(expressRoute)) return { wildcard: true };
  return {
    wildcard: false,
    segments: segmentsOf(expressRoute).map((s) => (LITERAL.test(s) ? s.toLowerCase() : null)),
  };
}

/**
 * express-openapi-validator 5.6.2 finds a request's route by trying every documented route's regular expression
 * in turn (`lookupRoute` in middlewares/openapi.metadata.js): about a hundred per request here, the largest cost of
 * a simple GET after the database. This narrows the search without replacing it: routes are grouped by segment
 * count and by their first and third segments (`orgs`, then `chains`, `agents`…), and each group gets the
 * validator's own metadata middleware over a copy of its context that lists only that group's routes, in the
 * original order. A route can only match a path with as many segments and the same literals, so every request
 * reaches the same route, parameters and errors as before (test/api/route-lookup.unit.test.ts compares the two).
 * Matching is case-insensitive, as the validator's is with Express's default routing.
 */
export function narrowValidatorRouteLookup(middleware: unknown): void {
  // `middleware()` keeps the validator it just built on itself; its metadata middleware is built on first use.
  const validator = (middleware as { _oav?: Validator })._oav;
  if (typeof validator?.metadataMiddleware !== 'function')
    throw new Error(
      'express-openapi-validator changed: no metadataMiddleware to narrow (see api/route-lookup.ts)',
    );
  const build = validator.metadataMiddleware.bind(validator);
  validator.metadataMiddleware = (context, responseApiDoc) => {
    const routes = Object.keys(context.expressRouteMap).map((route) => ({ route, shape: shapeOf(route) }));
    const counts = new Set<number>();
    const known = [new Set<string>(), new Set<string>()]; // literals at segment 0 and segment 2
    for (const { shape } of routes) {
      if (shape.wildcard) continue;
      counts.add(shape.segments.length);
      [0, 2].forEach((at, i) => {
        const literal = shape.segments[at];
        if (literal) known[i]!.add(literal);
      });
    }
    // Keys are limited to documented counts and literals ('*' stands for any other), so the cache is bounded.
    const groups = new Map<string, RequestHandler>();
    const groupFor = (count: number | '*', first: string, third: string) => {
      const key = `${count}/${first}/${third}`;
      let handler = groups.get(key);
      if (!handler) {
        const fits = (literal: string | null | undefined, value: string) =>
          literal === null || literal === undefined || literal === value;
        const expressRouteMap = Object.fromEntries(
          routes
            .filter(
              ({ shape }) =>
                shape.wildcard ||
                (shape.segments.length === count &&
                  fits(shape.segments[0], first) &&
                  fits(shape.segments[2], third)),
            )
            .map(({ route }) => [route, context.expressRouteMap[route]]),
        );
        handler = build(
          Object.assign(Object.create(context) as ValidatorContext, { expressRouteMap }),
          responseApiDoc,
        );
        groups.set(key, handler);
      }
      return handler;
    };
    return (req, res, next) => {
      // The validator matches on originalUrl (without its query), so group on that too.
      const segments = segmentsOf(req.originalUrl.split('?')[0]!);
      const count = counts.has(segments.length) ? segments.length : '*';
      const [first, third] = [segments[0], segments[2]].map((s, i) => {
        const lower = s?.toLowerCase() ?? '';
        return known[i]!.has(lower) ? lower : '*';
      });
      return groupFor(count, first!, third!)(req, res, next);
    };
  };
}
