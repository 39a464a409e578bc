import { validatorRequire } from './internals';

type Compile = (path: string, options?: { sensitive?: boolean; strict?: boolean }) => unknown;

/**
 * express-openapi-validator 5.6.2 compiles a path-to-regexp matcher for every documented route on every request
 * (`lookupRoute` in middlewares/openapi.metadata.js; upstream pull request cdimascio/express-openapi-validator#1217
 * is still open), which made route lookup most of the cost of a simple GET. A compiled matcher depends only on the
 * route and the options, and the validator only reads it, so the module function it calls is replaced by a
 * memoized one. The cache holds one entry per documented route and routing option pair.
 */
export function cacheValidatorRouteMatchers(): void {
  const module = validatorRequire('path-to-regexp') as { pathToRegexp: Compile & { memoized?: true } };
  if (module.pathToRegexp.memoized) return;
  const compile = module.pathToRegexp;
  const cache = new Map<string, unknown>();
  const memoized: Compile & { memoized?: true } = (path, options = {}) => {
    // Only string routes with the two options the validator passes are cached; anything else compiles as before.
    if (typeof path !== 'string' || Object.keys(options).some((k) => k !== 'sensitive' && k !== 'strict'))
      return compile(path, options);
    const key = `${options.sensitive ? 1 : 0}${options.strict ? 1 : 0}${path}`;
    let matcher = cache.get(key);
    if (!matcher) {
      matcher = compile(path, options);
      cache.set(key, matcher);
    }
    return matcher;
  };
  memoized.memoized = true;
  module.pathToRegexp = memoized;
}
