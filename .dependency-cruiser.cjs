// Architecture boundaries, checked by `npm run lint` (depcruise). Type-only imports are exempt where noted:
// they vanish at compile time (workflows type their activity proxies with the activities' signature).
const runtime = { dependencyTypesNot: ['type-only'] };

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'No import circles, type-only imports included: a circle ties features into one lump where nothing can load, ' +
        'test or change alone. A feature that needs one above it (browser sessions asking conversations for access) ' +
        'declares a narrow port in its own files and lib/services.ts wires the real service into it; shapes both ' +
        'sides need move down to a module that imports neither.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'features-own-their-repositories',
      comment:
        "A collection has one owner, the feature whose folder holds its repository; only that feature's code " +
        '(lib/<feature>/, activities/<feature>) uses it. Another feature reaches the data through the ' +
        "owner's service or a narrow port that lib/services.ts wires, so every collection has one writer.",
      severity: 'error',
      from: {
        path: '^(lib|activities)/([^/.]+)',
        pathNot: '^lib/(repositories|services|deps)\\.ts$',
      },
      to: { path: '^lib/[^/]+/.+\\.repository\\.ts$', pathNot: '^lib/$2/' },
    },
    {
      name: 'only-the-wiring-holds-every-repository',
      comment:
        'lib/repositories.ts holds every collection; only the wiring (lib/services.ts, lib/deps.ts, ' +
        'activities/index.ts) takes it. A feature is given `Tenants<ItsStore>` (lib/db/tenants.ts).',
      severity: 'error',
      from: {
        path: '^(lib|activities)/',
        pathNot: '^lib/(services|deps|repositories)\\.ts$|^activities/index\\.ts$',
      },
      to: { path: '^lib/repositories\\.ts$' },
    },
    {
      name: 'nothing-imports-api',
      comment: 'api/ is an entry point: only it, tests and benches may import it.',
      severity: 'error',
      from: { pathNot: '^(api|test|bench)/' },
      to: { path: '^api/' },
    },
    {
      name: 'no-workflow-code-outside-workflows',
      comment:
        'The API, activities, lib, the worker and the CLI reach workflows by name through lib/temporal/contracts, ' +
        'never by importing workflow code (that would load the workflow library outside the sandbox).',
      severity: 'error',
      from: { path: '^(api|lib|activities|worker|cli)/' },
      to: { path: '^workflows/', ...runtime },
    },
    {
      name: 'workflows-import-contracts-only',
      comment:
        'Workflow code is replayed: it may use its own modules, the contracts and the Temporal workflow API.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        pathNot: ['^workflows/', '^lib/temporal/contracts/', '@temporalio/(workflow|common)/'],
        ...runtime,
      },
    },
    {
      name: 'contracts-are-self-contained',
      comment:
        'Contracts load in the API, the worker and the workflow sandbox: no runtime dependency at all.',
      severity: 'error',
      from: { path: '^lib/temporal/contracts/' },
      to: { pathNot: '^lib/temporal/contracts/', ...runtime },
    },
    {
      name: 'lib-is-below-entry-points',
      comment:
        'lib/ is the domain: it never imports the entry points or the workflows and activities built on it.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(api|activities|workflows|worker|cli|test|bench)/' },
    },
    {
      name: 'activities-below-worker',
      comment: 'Activities are built from lib/ only.',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^(api|worker|cli|test|bench)/' },
    },
    {
      name: 'client-stands-alone',
      comment:
        'clients/typescript is what a user of the service installs: it depends on its own files and its packages only.',
      severity: 'error',
      from: { path: '^clients/typescript/' },
      to: { pathNot: ['^clients/typescript/', '^node_modules/'] },
    },
    {
      name: 'examples-use-the-client',
      comment:
        'Examples show a user of the service: they reach it through the client, never the service code.',
      severity: 'error',
      from: { path: '^examples/' },
      to: { path: '^(api|lib|activities|workflows|worker|cli|test|bench|stack)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|\\.stack|\\.data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
