import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

const nodeBuiltins = [
  'fs',
  'path',
  'crypto',
  'http',
  'https',
  'net',
  'os',
  'child_process',
  'worker_threads',
  'dns',
  'stream',
  'events',
  'timers',
  'util',
  'zlib',
  'url',
];

const MODEL_ACCESS =
  'Models are reached only through repositories (lib/<feature>/*.repository.ts), which scope every query to ' +
  'an organization; use deps.repos.tenant(organizationId) (or repos.crossOrg for the named cross-organization lookups).';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.stack/**',
      '.data/**',
      '.stryker-tmp/**',
      'reports/**',
      // generated from openapi.yaml; stack/check-client.mjs keeps it exactly what the generator writes
      'clients/typescript/src/schema.d.ts',
      '.dependency-cruiser.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: ['../../*'] }],
    },
  },
  {
    // Tenancy by construction: only repositories (and lib/db, the schemas, the composition of repositories)
    // reach models or raw collections; everything else goes through a repository scoped to an organization.
    // Benches are exempt: their baselines measure the bare driver on purpose.
    files: ['**/*.ts'],
    ignores: [
      '**/*.repository.ts',
      '**/*.schema.ts',
      'lib/db/**',
      'lib/repositories.ts',
      'lib/deps.ts',
      'test/helpers/store.ts',
      // the embedded database's own tests (no tenant data: the database itself is under test)
      'test/operations/embedded-db.test.ts',
      'test/helpers/db-format-samples.ts',
      'test/fixtures/embedded-db/**',
      'bench/**',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'mongoose', message: MODEL_ACCESS, allowTypeImports: true },
            { name: '@lib/db/connection', message: MODEL_ACCESS, allowTypeImports: true },
          ],
          patterns: [
            {
              group: ['**/*.schema'],
              importNamePattern: 'Model$',
              message: MODEL_ACCESS,
              allowTypeImports: true,
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression[callee.property.name=/^(model|collection)$/]',
          message: MODEL_ACCESS,
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // chai's property assertions (expect(x).to.be.true) read as unused expressions
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // supertest bodies are `any` by design; assertions on them are the point of a test
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    // The chain-step engine knows nothing of Temporal: it throws domain errors (StepFailed, RunSuperseded…) and
    // is told of its attempt; activities/chains/runs.ts maps them to the failures the workflows know.
    files: ['lib/chains/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: ['@temporalio/activity', '@temporalio/workflow'], patterns: ['../../*'] },
      ],
    },
  },
  {
    // Workflow code is replayed: no I/O, no clocks, no randomness outside the Temporal sandbox.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.flatMap((m) => [m, `node:${m}`]),
            'mongoose',
            'express',
            'socket.io',
            'ioredis',
            'openai',
            'nodemailer',
            '@aws-sdk/client-s3',
          ].map((name) => ({
            name,
            message: 'Workflows must stay deterministic: do side effects in activities.',
          })),
          patterns: ['../../*', '@lib/*', '@api/*'],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: null },
      globals: Object.fromEntries(
        [
          'process',
          'console',
          'URL',
          'setTimeout',
          'clearTimeout',
          'fetch',
          'Buffer',
          'require',
          'module',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
  {
    // CommonJS files (mocha loads its reporter with require).
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
