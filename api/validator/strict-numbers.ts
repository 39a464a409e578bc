import { validatorRequire } from './internals';

interface Parameter {
  in?: string;
  name?: string;
  $ref?: string;
  schema?: { type?: unknown };
}
interface RawRequest {
  query?: Record<string, unknown>;
  openapi?: { schema?: { parameters?: Parameter[] }; pathParams?: Record<string, unknown> };
}
type Modify = ((this: Mutator, req: RawRequest) => void) & { skipsNoops?: true; checksNumbers?: true };
interface Mutator {
  _apiDocs: { components?: { parameters?: Record<string, Parameter> } };
  modifyRequest: Modify;
}
type BadRequestClass = new (err: { path: string; message: string }) => Error & {
  errors: Array<{ path: string; message: string }>;
};

// How a number is written in a URL: JSON's integers and numbers, as a client that follows the contract sends them.
const WRITTEN: Record<string, RegExp> = {
  integer: /^-?[0-9]+$/,
  number: /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/,
};

function rawValues(req: RawRequest, parameter: Parameter): unknown[] {
  const source =
    parameter.in === 'query' ? req.query : parameter.in === 'path' ? req.openapi?.pathParams : undefined;
  const value = source?.[parameter.name ?? ''];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * express-openapi-validator 5.6.2 validates query and path parameters with ajv's `coerceTypes`, which turns any
 * string JavaScript reads as a whole number into an integer: `cursor=0.0`, `1e2`, `0x10`, ` 5`. A parameter the
 * contract types as integer (or number) must be written as one; anything else is a 400 naming it, checked on the
 * raw values before the validator coerces them (its `RequestParameterMutator` runs first).
 */
export function requireWrittenNumbers(): void {
  const { RequestParameterMutator } = validatorRequire('./middlewares/parsers/req.parameter.mutator') as {
    RequestParameterMutator: { prototype: Mutator };
  };
  const { BadRequest } = validatorRequire('./framework/types') as { BadRequest: BadRequestClass };
  const proto = RequestParameterMutator.prototype;
  const modify = proto.modifyRequest;
  if (modify.checksNumbers) return;
  const patched: Modify = function (this: Mutator, req) {
    for (const p of req.openapi?.schema?.parameters ?? []) {
      const parameter = p.$ref ? this._apiDocs.components?.parameters?.[p.$ref.replace(/^.+\//, '')] : p;
      const written = WRITTEN[parameter?.schema?.type as string];
      if (!parameter || !written) continue;
      for (const value of rawValues(req, parameter)) {
        if (typeof value === 'string' && written.test(value)) continue;
        const path = `/${parameter.in}/${parameter.name}`;
        const error = new BadRequest({
          path,
          message: `request${path} must be ${String(parameter.schema?.type)}`,
        });
        error.errors = [{ path, message: `must be ${String(parameter.schema?.type)}` }];
        throw error;
      }
    }
    modify.call(this, req);
  };
  // Other patches of this method look for their own mark: keep it.
  patched.skipsNoops = modify.skipsNoops;
  patched.checksNumbers = true;
  proto.modifyRequest = patched;
}
