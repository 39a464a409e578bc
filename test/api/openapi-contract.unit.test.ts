import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { ROOT } from '@test/helpers/paths';

type Schema = { type?: string; minLength?: number; enum?: unknown[]; pattern?: string; format?: string };
type Parameter = { $ref?: string; name: string; in: string; schema?: Schema & { $ref?: string } };

const spec = parse(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};

function resolve<T>(node: T & { $ref?: string }): T {
  if (!node.$ref) return node;
  const target = node.$ref
    .slice(2)
    .split('/')
    .reduce<unknown>((n, key) => (n as Record<string, unknown>)[key], spec);
  return resolve(target as T & { $ref?: string });
}

/** Whether a string schema refuses "": the validator answers an empty query value with 400 whatever the schema. */
function refusesEmpty(s: Schema) {
  if ((s.minLength ?? 0) >= 1 || s.format) return true;
  if (s.enum) return !s.enum.includes('');
  return s.pattern !== undefined && !new RegExp(s.pattern, 'u').test('');
}

describe('openapi.yaml says what the API accepts', () => {
  it('declares every string query parameter non-empty (the API refuses `?name=` with a 400)', () => {
    const loose: string[] = [];
    for (const [path, item] of Object.entries(spec.paths)) {
      const shared = (item.parameters as Parameter[] | undefined) ?? [];
      for (const [method, op] of Object.entries(item)) {
        if (method === 'parameters') continue;
        const own = ((op as { parameters?: Parameter[] }).parameters ?? []).map(resolve);
        for (const p of [...shared.map(resolve), ...own]) {
          const schema = p.schema && resolve(p.schema);
          if (p.in === 'query' && schema?.type === 'string' && !refusesEmpty(schema))
            loose.push(`${method.toUpperCase()} ${path} ${p.name}`);
        }
      }
    }
    expect(loose).to.deep.equal([]);
  });
});
