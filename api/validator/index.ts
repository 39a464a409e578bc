// Every change this service makes to express-openapi-validator's behaviour, in one place and applied in one call,
// each in a module of its own that says why. They reach into the validator's internals, so they are tied to
// one release (internals.ts).
import { assertPatchedVersion } from './internals';
import { acceptPlusAsSpaceInQueries, skipNoopParameterMutation } from './parameter-mutation';
import { ignoreReadOnlyInRequests } from './read-only';
import { cacheValidatorRouteMatchers } from './route-matchers';
import { requireWrittenNumbers } from './strict-numbers';

export { narrowValidatorRouteLookup } from './route-lookup';

/** Patches the validator's modules before a middleware is built from them; idempotent. */
export function patchValidator(): void {
  assertPatchedVersion();
  cacheValidatorRouteMatchers();
  skipNoopParameterMutation();
  acceptPlusAsSpaceInQueries();
  requireWrittenNumbers();
  ignoreReadOnlyInRequests();
}
