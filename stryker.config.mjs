// Mutation testing of the security and durability core (`npm run mutate`, on the local test stack). Workflow
// code is reached inside Temporal's sandbox through test/helpers/mutation.ts.
// Incremental: reports/stryker-incremental.json (committed) keeps earlier results, so a run re-tests only the
// mutants in changed code and the tests that changed. `npm run mutate -- --force` re-tests everything.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'mocha',
  checkers: ['typescript'],
  ignorePatterns: ['.stack', '.data', 'dist', 'stack', 'bench', 'examples', 'coverage'],
  tsconfigFile: 'tsconfig.json',
  mutate: [
    'lib/auth/**/*.ts',
    'lib/http/outbound.ts',
    'lib/tools/registry.ts',
    'lib/tools/specs/*.ts',
    'workflows/**/*.ts',
    '!workflows/index.ts',
  ],
  mochaOptions: {
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
    require: ['tsx/cjs', 'test/setup.ts'],
  },
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 30000,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  thresholds: { high: 90, low: 80, break: 80 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
