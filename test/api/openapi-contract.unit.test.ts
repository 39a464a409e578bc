import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { isSupportedFile } from '@lib/knowledge-bases/parsing';
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

  it("accepts an upload's fileName only where the service finds a supported extension in the trimmed name", () => {
    const body = resolve(
      (
        spec.paths['/orgs/{organizationId}/knowledgebases/{knowledgeBaseId}/files/upload-url'] as never as {
          post: {
            requestBody: {
              content: { 'application/json': { schema: { properties: { fileName: object } } } };
            };
          };
        }
      ).post.requestBody.content['application/json'].schema.properties.fileName,
    );
    const valid = new Ajv({ strict: false }).compile(body);
    // JavaScript trims all of these; Python's \s (what Schemathesis generates from) misses \ufeff.
    const names = [
      'a.pdf',
      ' a.pdf',
      'dir/ .pdf',
      ' .a.PNG',
      '.pdf',
      ' .pdf',
      '\n\f\r\v\f \f.PNG',
      '\ufeff.md',
    ];
    names.push('\u00a0\u2028\u3000.txt', '\u001c.txt', 'a.exe', 'a.pdf ');
    // The schema may be the stricter (a trailing space); a name it accepts must never be the service's 400.
    const refusedAfterAll = names.filter((n) => valid(n) && !isSupportedFile(n.trim()));
    expect(refusedAfterAll.map((n) => JSON.stringify(n))).to.deep.equal([]);
    expect(names.filter((n) => valid(n)).length, 'some names are accepted').to.be.greaterThan(3);
  });
});
