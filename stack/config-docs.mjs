// docs/configuration.md, generated from the service's own variables (lib/config/variables.ts) and the list below of
// what the local stack, tests and benches read, so the two can never differ:
//   node --import tsx stack/config-docs.mjs           writes it
//   node --import tsx stack/config-docs.mjs --check   fails when it is stale, or when stack/ or test/ reads a
//                                                      variable documented nowhere (part of `npm run lint`)
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import prettier from 'prettier';
import { ROOT } from './provision.mjs';

const { sections, defaultsInWords } = await import('../lib/config/variables.ts');

/** Read by `npm start`, `npm test`, `npm run bench` and `npm run mutate`, never by the service. */
const STACK_VARIABLES = {
  DATA_DIR: ['`.data`', "where `npm start` keeps the local stack's data (it survives restarts)"],
  STACK_PORT_OFFSET: ['`0`', 'shifts every local stack port (several test stacks side by side)'],
  MONGO_H2_HEAP: ['`1g`', 'Java heap of the local embedded database'],
  KEEP_TEST_DATA: ['unset', "keep a test stack's data folder (`.stack/test-data/…`) after the run"],
  KEEP_BENCH_DATA: ['unset', "keep a bench stack's data folder after the run"],
  CI: [
    'unset',
    'set: `npm test` also runs Schemathesis against the live API after mocha, and the soak beside it',
  ],
  SCHEMATHESIS: [
    'unset',
    '`1`: run Schemathesis after mocha as in CI; `only`: run it alone on a fresh stack',
  ],
  SCHEMATHESIS_SEED: ['`7`', "Schemathesis's seed (a finding is reproducible)"],
  SCHEMATHESIS_MAX_SECONDS: ['`300`', 'how long Schemathesis may run'],
  SOAK: [
    'unset',
    '`0`: `npm test` in CI leaves the soak out; `1`: run it after mocha outside CI too (docs/testing.md#the-soak)',
  ],
  SOAK_MINUTES: ['`3`', 'how long the soak `npm test` runs drives its mix'],
  TEST_JOBS: [
    'cores + 1',
    'test files a whole-suite `npm test` runs at once (docs/testing.md#the-suite); `1`: one at a time',
  ],
  FC_SEED: ['unset', "a property test's seed, to run a printed failure again"],
  RECORD_HISTORIES: [
    'unset',
    '`1`: save new workflow histories into `test/histories` (never over a pinned one)',
  ],
  TEST_ARTIFACTS_DIR: ['`.data/test-artifacts`', 'where the browser test keeps its screenshot'],
};
/** Set by the stack for the processes it starts; listed so every variable read anywhere is documented. */
const INTERNAL_VARIABLES = {
  MONGO_H2_JAR: 'the embedded database launcher the tests start',
  TEMPORAL_TEST_SERVER: "Temporal's time-skipping test server (from Maven Central) for the workflow tests",
  MUTATE_AREA: 'the area of `stryker.config.mjs` a mutation run mutates',
  MOCHA_STATS_FILE: "where mocha's reporter writes its counts for `npm test`'s summary",
};
/** The operating system's own. */
const SYSTEM_VARIABLES = new Set(['PATH', 'TZ', 'HOME']);

const target = join(ROOT, 'docs', 'configuration.md');
const code = (v) => `\`${v}\``;
const MB = 1024 * 1024;

/** The default as the table shows it: a literal, `unset`, or `required`. */
function defaultOf(name, type) {
  if (defaultsInWords[name]) return defaultsInWords[name];
  let t = type;
  for (;;) {
    const kind = t._def.typeName;
    if (kind === 'ZodDefault') {
      const value = t._def.defaultValue();
      if (value === '') return 'empty';
      if (typeof value === 'number' && value >= MB && value % MB === 0)
        return `${code(value)} (${value / MB} MB)`;
      return code(value);
    }
    if (kind === 'ZodOptional') return 'unset';
    if (kind === 'ZodEffects') t = t._def.schema;
    else return 'required';
  }
}

const row = (cells) => `| ${cells.join(' | ')} |`;
const table = (head, rows) => [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');

/** The page, formatted as `prettier --check` expects it. */
async function render() {
  const parts = [
    '# Configuration',
    '',
    'Every setting comes from the environment and is validated at start; a bad value stops the process with a',
    "message naming the variable. When a server's variable is set (`MONGODB_URI`, `TEMPORAL_ADDRESS`, `S3_ENDPOINT`,",
    '`REDIS_URL`, `SMTP_URL`), `npm start` and `npm test` do not start a local one for it.',
    '',
    'Generated from `lib/config/variables.ts` by `node --import tsx stack/config-docs.mjs`; `npm run lint` fails when',
    'this page and the code differ. Edit the `.describe()` there, not this page.',
  ];
  for (const [title, variables] of Object.entries(sections)) {
    const rows = Object.entries(variables).map(([name, type]) => {
      if (!type.description) throw new Error(`${name} in lib/config/variables.ts has no .describe()`);
      return [code(name), defaultOf(name, type), type.description];
    });
    parts.push('', `## ${title}`, '', table(['variable', 'default', 'meaning'], rows));
  }
  parts.push(
    '',
    '## The local stack, tests and benches',
    '',
    "Read by `npm start`, `npm test`, `npm run bench` and `npm run mutate`, never by the service. Each bench's own",
    'knobs are listed at the top of its file in `bench/`.',
    '',
    table(
      ['variable', 'default', 'meaning'],
      Object.entries(STACK_VARIABLES).map(([name, [def, meaning]]) => [code(name), def, meaning]),
    ),
    '',
    'Set by the stack for the processes it starts:',
    '',
    ...Object.entries(INTERNAL_VARIABLES).map(([name, meaning]) => `- ${code(name)}: ${meaning}`),
    '',
  );
  const options = await prettier.resolveConfig(target);
  return prettier.format(parts.join('\n'), { ...options, filepath: target });
}

function filesUnder(dir, pattern) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, pattern);
    return pattern.test(name) ? [path] : [];
  });
}

/** Variables stack/ and test/ read that this page does not document. */
function undocumented() {
  const known = new Set([
    ...Object.values(sections).flatMap((s) => Object.keys(s)),
    ...Object.keys(STACK_VARIABLES),
    ...Object.keys(INTERNAL_VARIABLES),
    ...SYSTEM_VARIABLES,
  ]);
  const found = [];
  for (const file of [
    ...filesUnder(join(ROOT, 'stack'), /\.m?js$/),
    ...filesUnder(join(ROOT, 'test'), /\.ts$/),
  ]) {
    for (const [, name] of readFileSync(file, 'utf8').matchAll(/process\.env(?:\.|\[')([A-Z][A-Z0-9_]*)/g))
      if (!known.has(name)) found.push(`${relative(ROOT, file)} reads ${name}`);
  }
  return found;
}

if (process.argv.includes('--check')) {
  const problems = undocumented();
  if (readFileSync(target, 'utf8') !== (await render()))
    problems.push('docs/configuration.md is stale: run `node --import tsx stack/config-docs.mjs`');
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
} else writeFileSync(target, await render());
