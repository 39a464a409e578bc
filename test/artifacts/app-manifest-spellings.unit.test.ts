import { expect } from 'chai';
import { checkManifestShape, extractManifest } from '@lib/artifacts/app-manifest';

/*
 * The manifest of an HTML app (docs/artifacts-and-apps.md, "Apps"): the one `<script … data-file="service.manifest.ts">`
 * outside HTML comments; its body a TypeScript module exporting one object literal written as JSON (`export default
 * {…}`, `export const name[: Type] = {…}`, an optional `as const` / `satisfies Type` and `;`). Here: the spellings
 * at their edges, where the page puts things, and each refusal's exact words.
 */

const TAG = '<script type="text/plain" data-file="service.manifest.ts">';
const manifestOf = (html: string) => extractManifest(html).declared;
const errorOf = (html: string) => {
  const found = extractManifest(html);
  return found.declaredError && `${found.declaredError}: ${found.problem}`;
};
const inPage = (body: string) => `<p>app</p>${TAG}${body}</script>`;
const EMPTY = { workflows: [], tables: [] };

describe('app manifest spellings', () => {
  it('reads the module with any white space between its words, or none where TypeScript needs none', () => {
    for (const body of [
      'export  default {"workflows":[]}',
      'export default  {"workflows":[]}',
      'export  const m = {"workflows":[]}',
      'export const  m = {"workflows":[]}',
      'export const m = {"workflows":[]}',
      'export const m ={"workflows":[]}',
      'export const m={"workflows": []}',
      'export const m : AppManifest = {"workflows":[]}',
      'export const m:AppManifest = {"workflows":[]}',
      'export const m: AppManifest= {"workflows":[]}',
      'export const m: Manifests.App = {"workflows":[]}',
      '{"workflows":[]}  as  const',
      '{"workflows":[]} satisfies  AppManifest',
      'export const m = {"workflows":[]} as const ;',
    ])
      expect(manifestOf(inPage(body)), body).to.deep.equal(EMPTY);
  });

  it('takes the words only where the module puts them, never from inside the JSON', () => {
    for (const name of ['export default wf', 'export const x = y', 'a;b', 'run as const']) {
      const body = `{"workflows": [${JSON.stringify(name)}]};`;
      expect(manifestOf(inPage(body)), body).to.deep.equal({ workflows: [name], tables: [] });
    }
    // `as const` needs white space before it: `}as const` is no TypeScript this reader knows
    expect(errorOf(inPage('{"workflows": []}as const'))).to.match(/^app_manifest_invalid_json: /);
  });

  it('finds the manifest wherever the page puts it outside comments, and only there', () => {
    const body = '{"workflows":["chn_a"]}';
    const declared = { workflows: ['chn_a'], tables: [] };
    // first thing in the page; after a closed comment; after an empty script
    expect(manifestOf(`${TAG}${body}</script>`)).to.deep.equal(declared);
    expect(manifestOf(`<!-- note --><p>x</p>${TAG}${body}</script>`)).to.deep.equal(declared);
    expect(manifestOf(`<script></script>${TAG}${body}</script>`)).to.deep.equal(declared);
    // a comment ends at its first `-->`, even one sharing its dashes with a `<!--` inside it (as in HTML)
    expect(manifestOf(`<!-- a<!--> ${TAG}${body}</script> -->`)).to.deep.equal(declared);
    for (const html of [
      // a comment that opens the page, or follows a stray `-->`
      `<!-- ${TAG}${body}</script> -->`,
      `text--><!-- ${TAG}${body}</script> -->`,
      // the name in the page's text is not the script's attribute
      `<p>data-file="service.manifest.ts"</p><script>${body}</script>`,
      // a script never closed holds nothing
      `<p>x</p>${TAG}${body}`,
    ])
      expect(manifestOf(html), html).to.equal(null);
    // a tag never ended after the manifest hides nothing before it
    expect(manifestOf(`${TAG}${body}</script><script`)).to.deep.equal(declared);
  });

  it('says exactly what is wrong', () => {
    expect(errorOf(`${TAG}{}</script>${TAG}{}</script>`)).to.equal(
      'app_manifest_invalid_shape: service.manifest.ts is embedded more than once',
    );
    expect(errorOf(inPage('{"workflows": [}'))).to.equal(
      'app_manifest_invalid_json: service.manifest.ts must export one object literal written as JSON: ' +
        `Unexpected token '}', "{"workflows": [}" is not valid JSON`,
    );
    expect(checkManifestShape({ a: 1, b: 2 })).to.equal(
      'unknown manifest keys: a, b (allowed: workflows, tables)',
    );
    expect(checkManifestShape({ workflows: ['w'.repeat(200)] })).to.deep.equal({
      workflows: ['w'.repeat(200)],
      tables: [],
    });
    expect(checkManifestShape({ workflows: ['w'.repeat(201)] })).to.equal(
      'a workflow id may have at most 200 characters',
    );
    const table = (i: number) => ({ table: `t${i}`, access: 'read' });
    expect(checkManifestShape({ tables: Array.from({ length: 100 }, (_, i) => table(i)) })).to.not.be.a(
      'string',
    );
    expect(checkManifestShape({ tables: Array.from({ length: 101 }, (_, i) => table(i)) })).to.equal(
      'at most 100 tables may be declared',
    );
    expect(checkManifestShape({ tables: [table(0), 'orders'] })).to.equal(
      'tables[1] must be an object { table, access }',
    );
    expect(checkManifestShape({ tables: [{ table: 'orders', access: 'read', x: 1, y: 2 }] })).to.equal(
      'tables[0] has unknown keys: x, y',
    );
  });
});
