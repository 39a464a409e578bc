// Mutation testing (`npm run mutate [area]`, on the local test stack), one area at a time. Each area mutates its
// own files, runs only the test files that cover them, and keeps its results in its own incremental file
// (committed), so a run re-tests only the mutants in changed code and the tests that changed, and a run of one
// area never re-tests (nor forgets) another's. `npm run mutate -- <area> --force` re-tests a whole area.
// Workflow code is reached inside Temporal's sandbox through test/helpers/mutation.ts.

/**
 * What each area mutates and the test files that cover it. `core` is the security and durability core. In the
 * newer areas the schemas are left out: they are declarations, whose mutants change only the types and
 * validation of fields every write sets. Those areas run without the type checker (minutes per mutant on a
 * shared machine): a mutant that would not compile runs anyway, and the tests judge it. Unit tests come first:
 * a mutant they kill stops there, before the integration tests.
 */
export const areas = {
  core: {
    mutate: [
      'lib/auth/**/*.ts',
      'lib/http/outbound.ts',
      'lib/tools/registry.ts',
      'lib/tools/specs/*.ts',
      'workflows/**/*.ts',
      '!workflows/index.ts',
    ],
    spec: [
      'test/auth.test.ts',
      'test/oidc.test.ts',
      'test/api-keys.test.ts',
      'test/assume-role.test.ts',
      'test/realtime-auth.test.ts',
      'test/outbound.test.ts',
      'test/agents-tools.test.ts',
      'test/agent-tools.test.ts',
      'test/workflows.test.ts',
      'test/kb-workflows.test.ts',
      'test/replay.test.ts',
      'test/unit/**/*.test.ts',
    ],
    checkers: ['typescript'],
    // The core's results from before areas existed.
    incrementalFile: 'reports/stryker-incremental.json',
  },
  credits: {
    mutate: ['lib/credits/**/*.ts', '!lib/credits/*.schema.ts'],
    spec: ['test/unit/credits-pricing.test.ts', 'test/credits.test.ts'],
    // The operator CLI runs in a child process, where no mutant is active, and needs stack/ (not in the sandbox).
    grep: '^(?!organization credits operator CLI)',
  },
  'task-plans': {
    mutate: ['lib/task-plans/**/*.ts', '!lib/task-plans/*.schema.ts'],
    spec: ['test/unit/task-plan-rules.test.ts', 'test/task-plans.test.ts'],
  },
  webhooks: {
    mutate: ['lib/webhooks/**/*.ts', '!lib/webhooks/*.schema.ts'],
    spec: [
      'test/unit/webhook-signature.test.ts',
      'test/webhooks.test.ts',
      'test/webhook-deliveries.test.ts',
      'test/webhook-dedupe.test.ts',
      // The admission kinds a delivery takes and gives back.
      'test/admission.test.ts',
    ],
  },
  schedules: {
    mutate: ['lib/schedules/**/*.ts', '!lib/schedules/*.schema.ts'],
    spec: ['test/unit/cron.test.ts', 'test/schedules.test.ts', 'test/schedule-fires.test.ts'],
  },
  // Inbound mail: MIME and authentication results have unit tests; the intake's rules are reached over SMTP.
  'email-agents': {
    mutate: ['lib/email-agents/**/*.ts', '!lib/email-agents/*.schema.ts'],
    spec: [
      'test/unit/email-mime.test.ts',
      'test/unit/mail-identity.test.ts',
      'test/unit/smtp-listener.test.ts',
      'test/email-agents.test.ts',
      'test/email-identity.test.ts',
    ],
  },
  // Who may see a knowledge base and what a search returns; ingestion's parsing is covered by the core.
  'kb-access': {
    mutate: [
      'lib/knowledge-bases/kb-access.ts',
      'lib/knowledge-bases/kb-search.service.ts',
      'lib/knowledge-bases/knowledge-bases.service.ts',
      'lib/knowledge-bases/agent-kb.service.ts',
      'lib/knowledge-bases/search-tool.ts',
      'lib/knowledge-bases/etl-conditions.ts',
      'lib/knowledge-bases/etl-rules.service.ts',
    ],
    spec: [
      'test/kb-manage.test.ts',
      'test/kb-search-spec.test.ts',
      'test/kb-agents.test.ts',
      'test/vectors-contract.test.ts',
    ],
  },
  artifacts: {
    mutate: ['lib/artifacts/**/*.ts', '!lib/artifacts/*.schema.ts'],
    spec: [
      'test/unit/app-manifest.test.ts',
      'test/unit/artifact-content-type.test.ts',
      'test/artifacts.test.ts',
      'test/artifacts-workflows.test.ts',
      'test/app-manifests.test.ts',
      'test/apps.test.ts',
      'test/chain-apps.test.ts',
    ],
  },
  // The browse tool's allow-list, on its own: its tests are unit tests, the page guard's need Chromium.
  'allow-list': {
    mutate: ['lib/browser-sessions/allow-list.ts'],
    spec: ['test/unit/allow-list.test.ts'],
  },
  'page-guard': {
    mutate: ['lib/browser-sessions/page-guard.ts'],
    spec: ['test/browser-sessions.test.ts'],
  },
};

const name = process.env.MUTATE_AREA ?? 'core';
const area = areas[name];
if (!area) throw new Error(`no mutation area ${name}; the areas are ${Object.keys(areas).join(', ')}`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'mocha',
  checkers: area.checkers ?? [],
  ignorePatterns: ['.stack', '.data', 'dist', 'stack', 'bench', 'examples', 'coverage'],
  tsconfigFile: 'tsconfig.json',
  mutate: area.mutate,
  mochaOptions: { spec: area.spec, grep: area.grep, require: ['tsx/cjs', 'test/setup.ts'] },
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: area.incrementalFile ?? `reports/stryker-incremental-${name}.json`,
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 30000,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  thresholds: { high: 90, low: 80, break: 80 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
