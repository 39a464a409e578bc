import type { KeywordDefinition } from 'ajv';
import { validatorRequire } from './internals';

interface RequestAjv {
  removeKeyword(keyword: string): unknown;
  addKeyword(definition: KeywordDefinition): unknown;
}
type CreateRequestAjv = ((...args: unknown[]) => RequestAjv) & { ignoresReadOnly?: true };

/**
 * Drops a property whose schema says `readOnly` from the request it came in. Not declared `modifying`: ajv would
 * then read the property again after this keyword and check the rest of its schema against nothing.
 */
const ignoreReadOnly: KeywordDefinition = {
  keyword: 'readOnly',
  schemaType: 'boolean',
  compile:
    (readOnly: boolean) => (_data: unknown, ctx?: { parentData?: unknown; parentDataProperty?: unknown }) => {
      const parent = ctx?.parentData as Record<string | number, unknown> | undefined;
      const key = ctx?.parentDataProperty as string | number | undefined;
      if (readOnly && parent && key !== undefined) delete parent[key];
      return true;
    },
};

/**
 * A PUT accepts back what the GET returned: fields the server owns (ids, timestamps, owners, derived names) are
 * `readOnly` in openapi.yaml, and a request that carries them has them removed before a handler sees it, whatever
 * their value. express-openapi-validator 5.6.2 does that only with `removeAdditional`, which would also drop unknown
 * properties silently (they stay a 400 here); otherwise it refuses every read-only property. So the request
 * validators' ajv instances get a `readOnly` keyword that only removes.
 */
export function ignoreReadOnlyInRequests(): void {
  const ajvModule = validatorRequire('./framework/ajv') as { createRequestAjv: CreateRequestAjv };
  if (ajvModule.createRequestAjv.ignoresReadOnly) return;
  const create = ajvModule.createRequestAjv;
  const patched: CreateRequestAjv = (...args) => {
    const ajv = create(...args);
    ajv.removeKeyword('readOnly');
    ajv.addKeyword(ignoreReadOnly);
    return ajv;
  };
  patched.ignoresReadOnly = true;
  ajvModule.createRequestAjv = patched;
}
