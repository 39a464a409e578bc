import { validatorRequire } from './internals';

interface Parameter {
  in?: string;
  $ref?: string;
  schema?: { type?: unknown; $ref?: string };
}
interface MutatedRequest {
  originalUrl: string;
  openapi?: { schema?: { parameters?: Parameter[] } };
}
interface Mutator {
  _apiDocs: { components?: { parameters?: Record<string, Parameter> } };
  modifyRequest: (this: Mutator, req: MutatedRequest) => void;
}
type MutatorClass = { prototype: Mutator & { modifyRequest: { skipsNoops?: true } } };

// Path parameters of these types are left as they are (an array is split; a `content` one has no schema).
const SCALAR = new Set(['string', 'integer', 'number', 'boolean']);

/** A parameter as the validator dereferences it (only `#/components/parameters/…` references exist). */
function dereference(mutator: Mutator, parameter: Parameter): Parameter | undefined {
  if (!parameter.$ref) return parameter;
  return mutator._apiDocs.components?.parameters?.[parameter.$ref.replace(/^.+\//, '')];
}

/**
 * express-openapi-validator 5.6.2 rewrites every request's query and parameters before validating them
 * (`RequestParameterMutator.modifyRequest`): it parses the URL with the legacy `url.parse`, runs its bracket-notation
 * pass over the query, and dereferences and normalizes each of the operation's parameters. For a request without a
 * query string to an operation whose parameters are all scalar path parameters none of that changes anything (the
 * query is empty; such path parameters come from the route match as they are, their styles were applied when the
 * route's validator was built; only query, header, array and `content` parameters are rewritten). Those requests,
 * most reads, skip it; the validation itself runs as before. test/api/parameter-mutation.unit.test.ts checks both kinds of request.
 */
export function skipNoopParameterMutation(): void {
  const { RequestParameterMutator } = validatorRequire('./middlewares/parsers/req.parameter.mutator') as {
    RequestParameterMutator: MutatorClass;
  };
  const proto = RequestParameterMutator.prototype;
  if (proto.modifyRequest.skipsNoops) return;
  const modify = proto.modifyRequest;
  const pathOnly = new WeakMap<Parameter[], boolean>();
  const none: Parameter[] = [];
  const patched: Mutator['modifyRequest'] & { skipsNoops?: true } = function (this: Mutator, req) {
    const parameters = req.openapi?.schema?.parameters ?? none;
    let skip = pathOnly.get(parameters);
    if (skip === undefined) {
      skip = parameters.every((p) => {
        const parameter = dereference(this, p);
        return parameter?.in === 'path' && SCALAR.has(parameter.schema?.type as string);
      });
      pathOnly.set(parameters, skip);
    }
    if (skip && !req.originalUrl.includes('?')) return;
    modify.call(this, req);
  };
  patched.skipsNoops = true;
  proto.modifyRequest = patched;
}

type QueryParser = { prototype: { parseQueryStringUndecoded: (qs: string | null) => Map<string, string[]> } };

/**
 * A `+` in a query string is a space (application/x-www-form-urlencoded: what URLSearchParams, HTML forms and
 * Python's requests send), and Express decodes it so. express-openapi-validator 5.6.2 checks the raw query for
 * reserved characters before decoding it (`allowReserved: false`) and counts that `+` as one, so `?q=a+b` was a
 * 400 "must be url encoded". Its raw view of the query reads a `+` as the `%20` it stands for; every other reserved
 * character is still refused.
 */
export function acceptPlusAsSpaceInQueries(): void {
  const { RequestParameterMutator } = validatorRequire('./middlewares/parsers/req.parameter.mutator') as {
    RequestParameterMutator: QueryParser & { plusIsSpace?: true };
  };
  if (RequestParameterMutator.plusIsSpace) return;
  const proto = RequestParameterMutator.prototype;
  const parse = proto.parseQueryStringUndecoded;
  proto.parseQueryStringUndecoded = function (this: unknown, qs) {
    return parse.call(this, qs ? qs.replaceAll('+', '%20') : qs);
  };
  RequestParameterMutator.plusIsSpace = true;
}
