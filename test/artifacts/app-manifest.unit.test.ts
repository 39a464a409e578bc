import { expect } from 'chai';
import { extractManifest, manifestSha256, type AppManifest } from '@lib/artifacts/app-manifest';
import { appContentSecurityPolicy, bridgeScript, withBridge } from '@lib/artifacts/app-page';
import { fileNameFor, normalizeContentType } from '@lib/artifacts/artifact-content';

const page = (script: string) => `<!doctype html><html><head>${script}</head><body>x</body></html>`;
const embedded = (body: string, attrs = 'type="text/plain" data-file="service.manifest.ts"') =>
  page(`<script ${attrs}>${body}</script>`);

describe('app manifest extraction', () => {
  const manifest: AppManifest = { workflows: ['chn_a'], tables: [{ table: 'orders', access: 'read' }] };

  it('reads the object a TypeScript module exports, in its usual spellings', () => {
    const json = JSON.stringify(manifest);
    for (const body of [
      `export default ${json};`,
      `\n  export default ${json} satisfies AppManifest\n`,
      `export const manifest: AppManifest = ${json} as const;`,
      json,
    ]) {
      const found = extractManifest(embedded(body));
      expect(found.declared, body).to.deep.equal(manifest);
      expect(found.declaredError).to.equal(null);
      expect(found.declaredSha256).to.equal(manifestSha256(manifest));
    }
    for (const attrs of [
      "id='service.manifest.ts'",
      'data-file=service.manifest.ts',
      'DATA-FILE="service.manifest.ts"',
    ])
      expect(extractManifest(embedded(json, attrs)).declared, attrs).to.deep.equal(manifest);
  });

  it('treats missing keys as empty and gives one hash to one manifest however it is written', () => {
    const found = extractManifest(embedded('export default {"tables": []}'));
    expect(found.declared).to.deep.equal({ workflows: [], tables: [] });
    const spaced = extractManifest(embedded(JSON.stringify(manifest, null, 2)));
    const reordered = extractManifest(
      embedded('{"tables":[{"access":"read","table":"orders"}],"workflows":["chn_a"]}'),
    );
    expect(spaced.declaredSha256).to.equal(reordered.declaredSha256);
    expect(extractManifest(embedded('{"workflows":["chn_b"]}')).declaredSha256).to.not.equal(
      spaced.declaredSha256,
    );
  });

  it('finds no manifest in a plain page, in a comment, or in another script', () => {
    for (const html of [
      page('<script>const x = 1;</script>'),
      page(`<!-- <script data-file="service.manifest.ts">{"tables":[]}</script> -->`),
      page('<script data-file="other.ts">{"tables":[]}</script>'),
      page('<scripts data-file="service.manifest.ts">{}</scripts>'),
      '',
    ]) {
      expect(extractManifest(html), html).to.deep.include({
        declared: null,
        declaredError: null,
        declaredSha256: null,
      });
    }
  });

  it('reports a body that is not JSON as app_manifest_invalid_json', () => {
    for (const body of [
      'export default { tables: [] }',
      "{'tables': []}",
      '{"tables": [],}',
      '',
      'export default',
    ]) {
      const found = extractManifest(embedded(body));
      expect(found, body).to.deep.include({ declared: null, declaredError: 'app_manifest_invalid_json' });
    }
  });

  it('reports a manifest of the wrong shape as app_manifest_invalid_shape, naming the problem', () => {
    const cases: Array<[string, string]> = [
      ['[]', 'must be an object'],
      ['{"tables": {}}', 'tables must be an array'],
      ['{"workflows": [1]}', 'workflows must be'],
      ['{"workflows": [""]}', 'workflows must be'],
      ['{"workflows": ["a", "a"]}', 'twice'],
      ['{"tables": [{"table": "t", "access": "admin"}]}', 'read or write'],
      ['{"tables": [{"table": "bad name", "access": "read"}]}', 'table name'],
      ['{"tables": [{"table": "t", "access": "read", "rows": 1}]}', 'unknown keys'],
      ['{"tables": [{"table": "t", "access": "read"}, {"table": "t", "access": "write"}]}', 'twice'],
      ['{"tables": [], "secrets": true}', 'unknown manifest keys'],
      [`{"workflows": ${JSON.stringify(Array.from({ length: 101 }, (_, i) => `w${i}`))}}`, 'at most 100'],
      // a value that is not an object has no keys to refuse, and would read as an empty manifest
      ['5', 'must be an object'],
      ['"workflows"', 'must be an object'],
      ['{"tables": [5]}', 'tables[0] must be an object'],
      // blank is empty, however many spaces
      ['{"workflows": ["  "]}', 'workflows must be'],
      // a list whose text is a table name is still not a name
      ['{"tables": [{"table": ["orders"], "access": "read"}]}', 'tables[0].table must be a table name'],
      ['{"tables": [{"table": 7, "access": "read"}]}', 'tables[0].table must be a table name'],
    ];
    for (const [body, problem] of cases) {
      const found = extractManifest(embedded(body));
      expect(found.declaredError, body).to.equal('app_manifest_invalid_shape');
      expect(found.problem, body).to.contain(problem);
    }
    const twice = page(
      '<script data-file="service.manifest.ts">{}</script><script data-file="service.manifest.ts">{}</script>',
    );
    expect(extractManifest(twice).declaredError).to.equal('app_manifest_invalid_shape');
  });

  it('accepts exactly as many workflows and tables as the limits allow', () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`);
    const full = {
      workflows: names(100),
      tables: names(100).map((table) => ({ table, access: 'read' })),
    };
    const found = extractManifest(embedded(JSON.stringify(full)));
    expect(found.problem).to.equal(null);
    expect(found.declared?.workflows).to.have.length(100);
    expect(found.declared?.tables).to.have.length(100);
    const tooMany = { tables: names(101).map((table) => ({ table, access: 'read' })) };
    expect(extractManifest(embedded(JSON.stringify(tooMany))).problem).to.contain('at most 100 tables');
  });

  it('scans a hostile page in linear time (no backtracking on unclosed tags or comments)', () => {
    const hostile = '<script '.repeat(100_000) + '<!--'.repeat(100_000) + '<head'.repeat(100_000);
    expect(extractManifest(hostile).declared).to.equal(null);
    expect(withBridge(hostile, '<script></script>').startsWith('<script></script>')).to.equal(true);
    // A long run of spaces before the end of the manifest (a backtracking suffix pattern took minutes on it).
    const spaces = embedded(`export default {"workflows":[]}${' '.repeat(300_000)}x`);
    expect(extractManifest(spaces).declaredError).to.match(/app_manifest_invalid_json|JSON/);
  });
});

describe('app page', () => {
  it('puts the bridge first, after a doctype, and keeps the page', () => {
    expect(withBridge('<!DOCTYPE html><p>a</p>', '<script>b</script>')).to.equal(
      '<!DOCTYPE html><script>b</script><p>a</p>',
    );
    expect(withBridge('<p>a</p>', '<script>b</script>')).to.equal('<script>b</script><p>a</p>');
  });

  it('embeds values the page declared so that they cannot close the bridge script', () => {
    const script = bridgeScript({
      appApiBase: 'http://api.test/orgs/o/artifacts/a/app',
      token: 'tok',
      manifest: { workflows: ['</script><script>alert(1)</script>'], tables: [] },
    });
    expect(script.match(/<\/script>/g)).to.have.length(1);
    expect(script).to.contain('\\u003c/script\\u003e');
  });

  it('sandboxes the page, lets it load nothing and reach only the API', () => {
    const csp = appContentSecurityPolicy('https://api.example.com', "'self'");
    const directives = Object.fromEntries(
      csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]),
    );
    expect(directives).to.deep.include({
      sandbox: 'allow-scripts allow-forms allow-modals allow-downloads',
      'default-src': "'none'",
      'script-src': "'unsafe-inline'",
      'connect-src': 'https://api.example.com',
      'frame-ancestors': "'self'",
      'base-uri': "'none'",
      'form-action': "'none'",
    });
    expect(directives.sandbox).to.not.contain('allow-same-origin');
  });
});

describe('artifact content helpers', () => {
  it('normalises content types and names downloads after the type', () => {
    expect(normalizeContentType(' Text/HTML ;  charset=UTF-8 ')).to.equal('text/html; charset=UTF-8');
    expect(() => normalizeContentType('html')).to.throw('MIME');
    expect(fileNameFor('Q3 notes', 'text/markdown')).to.equal('Q3_notes.md');
    expect(fileNameFor('page.html', 'text/html; charset=utf-8')).to.equal('page.html');
    expect(fileNameFor('../..', 'application/x-unknown-thing')).to.equal('artifact');
  });
});
