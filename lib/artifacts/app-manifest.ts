import { createHash } from 'node:crypto';
import { TABLE_NAME_PATTERN } from '@lib/tables/limits';

/** The file an HTML app declares its scope in, embedded as `<script type="text/plain" data-file="service.manifest.ts">`. */
export const MANIFEST_FILE = 'service.manifest.ts';

export const TABLE_ACCESS = ['read', 'write'] as const;
export type TableAccess = (typeof TABLE_ACCESS)[number];

/** What an app declares it needs: workflows (action chains, by actionChainId or name) and tables with their access. */
export interface AppManifest {
  workflows: string[];
  tables: Array<{ table: string; access: TableAccess }>;
}

export type ManifestError = 'app_manifest_invalid_json' | 'app_manifest_invalid_shape';

export type DeclaredManifest =
  | { declared: AppManifest; declaredSha256: string; declaredError: null; problem: null }
  /** a plain HTML page (or not HTML at all): no app */
  | { declared: null; declaredSha256: null; declaredError: null; problem: null }
  | { declared: null; declaredSha256: null; declaredError: ManifestError; problem: string };

export const MANIFEST_LIMITS = { workflows: 100, tables: 100, refLength: 200 };

const NONE = { declared: null, declaredSha256: null, declaredError: null, problem: null } as const;

const broken = (declaredError: ManifestError, problem: string): DeclaredManifest => ({
  declared: null,
  declaredSha256: null,
  declaredError,
  problem,
});

const NAMES_MANIFEST =
  /\b(?:data-file|id)\s*=\s*(?:"service\.manifest\.ts"|'service\.manifest\.ts'|service\.manifest\.ts(?=[\s/>]|$))/i;

/** The TypeScript module around the object: `export default {…}`, `export const m: AppManifest = {…} as const;`. */
function objectText(source: string): string {
  const body = source
    .trim()
    .replace(/^export\s+default\s+/, '')
    .replace(/^export\s+const\s+[A-Za-z_$][\w$]*\s*(?::\s*[A-Za-z_$][\w$.]*\s*)?=\s*/, '')
    .replace(/;$/, '')
    .trimEnd();
  // Found without a leading `\s+` in the pattern: tried at every space of a long run of them, it backtracked
  // over the whole run each time (quadratic; a page of spaces held the API's event loop for minutes).
  const suffix = /(?:as\s+const|satisfies\s+[A-Za-z_$][\w$.]*)$/.exec(body);
  if (suffix && /\s$/.test(body.slice(0, suffix.index))) return body.slice(0, suffix.index).trim();
  return body.trim();
}

/** The page without HTML comments (an unclosed comment runs to the end). Linear: no backtracking on any input. */
function withoutComments(html: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const open = html.indexOf('<!--', at);
    if (open < 0) return out + html.slice(at);
    out += html.slice(at, open);
    const close = html.indexOf('-->', open + 4);
    if (close < 0) return out;
    at = close + 3;
  }
}

/** Every closed `<script …>…</script>` element: its attribute text and body. Linear in the page's length. */
function scripts(html: string): Array<{ attributes: string; body: string }> {
  const lower = html.toLowerCase();
  const found: Array<{ attributes: string; body: string }> = [];
  let at = 0;
  for (;;) {
    const open = lower.indexOf('<script', at);
    if (open < 0) return found;
    const after = lower[open + 7];
    const tagEnd = lower.indexOf('>', open + 7);
    if (tagEnd < 0) return found;
    if (after !== undefined && !/[\s>/]/.test(after)) {
      at = open + 7; // <scripts>, <script-x>: not a script element
      continue;
    }
    const close = lower.indexOf('</script', tagEnd + 1);
    if (close < 0) return found;
    found.push({ attributes: html.slice(open + 7, tagEnd), body: html.slice(tagEnd + 1, close) });
    at = close + 8;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The manifest in canonical form, or why it has the wrong shape. */
export function checkManifestShape(value: unknown): AppManifest | string {
  if (!isObject(value)) return 'the manifest must be an object { workflows, tables }';
  const unknown = Object.keys(value).filter((k) => k !== 'workflows' && k !== 'tables');
  if (unknown.length) return `unknown manifest keys: ${unknown.join(', ')} (allowed: workflows, tables)`;
  const workflows = value.workflows ?? [];
  const tables = value.tables ?? [];
  if (!Array.isArray(workflows) || !workflows.every((w) => typeof w === 'string' && w.trim() !== ''))
    return 'workflows must be an array of workflow ids or names (non-empty strings)';
  if (workflows.some((w: string) => w.length > MANIFEST_LIMITS.refLength))
    return `a workflow id may have at most ${MANIFEST_LIMITS.refLength} characters`;
  if (workflows.length > MANIFEST_LIMITS.workflows)
    return `at most ${MANIFEST_LIMITS.workflows} workflows may be declared`;
  if (new Set(workflows).size !== workflows.length) return 'a workflow is declared twice';
  if (!Array.isArray(tables)) return 'tables must be an array of { table, access }';
  if (tables.length > MANIFEST_LIMITS.tables)
    return `at most ${MANIFEST_LIMITS.tables} tables may be declared`;
  const pattern = new RegExp(TABLE_NAME_PATTERN);
  const seen = new Set<string>();
  const out: AppManifest['tables'] = [];
  for (const [i, entry] of tables.entries()) {
    if (!isObject(entry)) return `tables[${i}] must be an object { table, access }`;
    const extra = Object.keys(entry).filter((k) => k !== 'table' && k !== 'access');
    if (extra.length) return `tables[${i}] has unknown keys: ${extra.join(', ')}`;
    if (typeof entry.table !== 'string' || !pattern.test(entry.table))
      return `tables[${i}].table must be a table name (letters, digits and underscores)`;
    if (!TABLE_ACCESS.includes(entry.access as TableAccess))
      return `tables[${i}].access must be read or write`;
    if (seen.has(entry.table)) return `table ${entry.table} is declared twice`;
    seen.add(entry.table);
    out.push({ table: entry.table, access: entry.access as TableAccess });
  }
  return { workflows: workflows as string[], tables: out };
}

export function manifestSha256(manifest: AppManifest): string {
  const canonical = JSON.stringify({
    workflows: manifest.workflows,
    tables: manifest.tables.map((t) => ({ table: t.table, access: t.access })),
  });
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * The app manifest an HTML page declares: the one `<script … data-file="service.manifest.ts">` (or
 * `id="service.manifest.ts"`) outside HTML comments, whose body is a TypeScript module exporting one object
 * literal written as JSON. No such element: a plain page (no app). Two of them, or a body that is not JSON or
 * not of the manifest's shape: a declaredError.
 */
export function extractManifest(html: string): DeclaredManifest {
  const bodies = scripts(withoutComments(html))
    .filter((s) => NAMES_MANIFEST.test(s.attributes))
    .map((s) => s.body);
  if (!bodies.length) return NONE;
  if (bodies.length > 1)
    return broken('app_manifest_invalid_shape', `${MANIFEST_FILE} is embedded more than once`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(objectText(bodies[0]!));
  } catch (err) {
    return broken(
      'app_manifest_invalid_json',
      `${MANIFEST_FILE} must export one object literal written as JSON: ${(err as Error).message}`,
    );
  }
  const shape = checkManifestShape(parsed);
  if (typeof shape === 'string') return broken('app_manifest_invalid_shape', shape);
  return { declared: shape, declaredSha256: manifestSha256(shape), declaredError: null, problem: null };
}
