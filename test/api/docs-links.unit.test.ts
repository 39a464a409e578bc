import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { expect } from 'chai';
import { ROOT } from '@test/helpers/paths';

// Every relative link in the README, docs/ and the benchmark results leads somewhere: the file exists and, when
// the link names an #anchor, a heading of that file has it (GitHub's slugs). Links to other sites are not checked.

function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  return ['README.md', ...docs, join('bench', 'RESULTS.md')];
}

/** Markdown without its fenced code blocks and inline code, where a `](…)` is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lowercase, punctuation other than hyphens and spaces dropped, spaces → hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a document's headings give, with GitHub's -1, -2 … for repeated ones. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, text] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(text ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative links of a document: [text](target), without the external ones. */
export function relativeLinks(markdown: string): string[] {
  const targets = [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (m) => m[1] ?? '',
  );
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** What is wrong with each relative link of one document, as `file: link (why)`. */
export function brokenLinks(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const problems: string[] = [];
  for (const link of relativeLinks(text)) {
    const [path, anchor] = link.split('#', 2);
    const target = path ? join(dirname(join(root, file)), decodeURIComponent(path)) : join(root, file);
    if (!existsSync(target)) {
      problems.push(`${file}: ${link} (no file ${relative(root, target)})`);
      continue;
    }
    if (anchor === undefined || !target.endsWith('.md')) continue;
    if (!anchors(readFileSync(target, 'utf8')).has(anchor.toLowerCase()))
      problems.push(`${file}: ${link} (no heading #${anchor} in ${relative(root, target)})`);
  }
  return problems;
}

describe('links between the README, docs/ and bench/RESULTS.md', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug("Admission: one organization's load never starves another's")).to.equal(
      'admission-one-organizations-load-never-starves-anothers',
    );
    expect(slug('Operations: metrics, traces, request ids, search attributes')).to.equal(
      'operations-metrics-traces-request-ids-search-attributes',
    );
    expect(slug('`api-read`')).to.equal('api-read');
    expect([...anchors('# A\n## A\n```sh\n# not a heading\n```\n')]).to.deep.equal(['a', 'a-1']);
  });

  it('finds relative links outside code only', () => {
    expect(
      relativeLinks('[a](docs/x.md#y) [b](https://example.com) `[c](z.md)`\n```\n[d](w.md)\n```\n[e](#f)'),
    ).to.deep.equal(['docs/x.md#y', '#f']);
  });

  for (const file of documents()) {
    it(`${file}: every relative link names an existing file and heading`, () => {
      expect(brokenLinks(ROOT, file)).to.deep.equal([]);
    });
  }
});
