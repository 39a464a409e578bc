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
      'test/identity/auth.test.ts',
      'test/identity/oidc.test.ts',
      'test/identity/api-keys.test.ts',
      'test/identity/assume-role.test.ts',
      'test/identity/realtime-auth.test.ts',
      'test/agents/outbound.test.ts',
      'test/agents/agents-tools.test.ts',
      'test/agents/agent-tools.test.ts',
      'test/operations/workflows.test.ts',
      'test/operations/workflow-failures.test.ts',
      'test/knowledge-bases/kb-workflows.test.ts',
      'test/operations/replay.test.ts',
      'test/**/*.unit.test.ts',
      'test/operations/dependency-deadlines.test.ts',
    ],
    checkers: ['typescript'],
    // The core's results from before areas existed.
    incrementalFile: 'reports/stryker-incremental.json',
  },
  credits: {
    mutate: ['lib/credits/**/*.ts', '!lib/credits/*.schema.ts'],
    spec: [
      'test/credits/credits-pricing.unit.test.ts',
      'test/credits/credits.test.ts',
      'test/credits/credit-accounts.test.ts',
    ],
    // The operator CLI runs in a child process, where no mutant is active, and needs stack/ (not in the sandbox).
    grep: '^(?!organization credits operator CLI)',
  },
  'task-plans': {
    mutate: ['lib/task-plans/**/*.ts', '!lib/task-plans/*.schema.ts'],
    spec: [
      'test/conversations/task-plan-rules.unit.test.ts',
      'test/conversations/task-plans.test.ts',
      'test/conversations/task-plan-execution.test.ts',
    ],
  },
  // Unit tests for all but the repository (the services over an in-memory stand-in of it, test/webhooks/
  // webhooks-world.ts); the integration tests reach the same rules, and the repository, over the database.
  webhooks: {
    mutate: ['lib/webhooks/**/*.ts', '!lib/webhooks/*.schema.ts'],
    spec: [
      'test/webhooks/webhook-signature.unit.test.ts',
      'test/webhooks/webhook-headers.unit.test.ts',
      'test/webhooks/webhook-rate-limit.unit.test.ts',
      'test/webhooks/webhook-delivery-plan.unit.test.ts',
      'test/webhooks/webhooks-service.unit.test.ts',
      'test/webhooks/webhook-handlers.unit.test.ts',
      'test/webhooks/webhook-accept.unit.test.ts',
      'test/webhooks/webhooks.test.ts',
      'test/webhooks/webhook-limits.test.ts',
      'test/webhooks/webhook-deliveries.test.ts',
      'test/webhooks/webhook-dedupe.test.ts',
      // The repository's order and timestamps, which the in-memory stand-in cannot show.
      'test/webhooks/webhooks-repository.test.ts',
      // The admission kinds a delivery takes and gives back.
      'test/admission/admission.test.ts',
    ],
  },
  schedules: {
    mutate: ['lib/schedules/**/*.ts', '!lib/schedules/*.schema.ts'],
    spec: [
      'test/schedules/cron.unit.test.ts',
      'test/schedules/schedule-sync.unit.test.ts',
      'test/schedules/fire-plan.unit.test.ts',
      'test/schedules/reconciler-schedule.unit.test.ts',
      'test/schedules/schedule-handlers-service.unit.test.ts',
      'test/schedules/schedules-service.unit.test.ts',
      'test/schedules/schedules.test.ts',
      'test/schedules/schedule-handlers.test.ts',
      'test/schedules/schedule-fires.test.ts',
      // The repositories' revisions, handler order and sweep order, over the database.
      'test/schedules/schedules-repository.test.ts',
    ],
  },
  // Inbound mail: unit tests for all but the messages repository (the inbound service's over fake repositories);
  // the integration tests reach the same rules, and the repository, over SMTP, the workflow and the database.
  'email-agents': {
    mutate: ['lib/email-agents/**/*.ts', '!lib/email-agents/*.schema.ts'],
    spec: [
      'test/email-agents/email-mime.unit.test.ts',
      'test/email-agents/authentication-results.unit.test.ts',
      'test/email-agents/mail-identity.unit.test.ts',
      'test/email-agents/parse-mail.unit.test.ts',
      'test/email-agents/email-intake.unit.test.ts',
      'test/email-agents/email-replies.unit.test.ts',
      'test/email-agents/smtp-listener.unit.test.ts',
      'test/email-agents/smtp-session.unit.test.ts',
      'test/email-agents/listen.unit.test.ts',
      'test/email-agents/inbound-email.unit.test.ts',
      'test/email-agents/email-agents.test.ts',
      'test/email-agents/email-agent-delivery.test.ts',
      'test/email-agents/email-identity.test.ts',
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
      'test/knowledge-bases/etl-conditions.unit.test.ts',
      'test/knowledge-bases/kb-access.unit.test.ts',
      'test/knowledge-bases/search-tool.unit.test.ts',
      'test/knowledge-bases/kb-search.unit.test.ts',
      'test/knowledge-bases/kb-search-agents.unit.test.ts',
      'test/knowledge-bases/knowledge-bases.unit.test.ts',
      'test/knowledge-bases/agent-kb.unit.test.ts',
      'test/knowledge-bases/etl-rules.unit.test.ts',
      'test/knowledge-bases/kb-manage.test.ts',
      'test/knowledge-bases/kb-search-spec.test.ts',
      'test/knowledge-bases/kb-agents.test.ts',
      'test/knowledge-bases/vectors-contract.test.ts',
    ],
  },
  artifacts: {
    mutate: ['lib/artifacts/**/*.ts', '!lib/artifacts/*.schema.ts'],
    spec: [
      'test/artifacts/artifacts-service.unit.test.ts',
      'test/artifacts/artifact-access.unit.test.ts',
      'test/artifacts/artifacts-pins.unit.test.ts',
      'test/artifacts/tool-artifacts.unit.test.ts',
      'test/artifacts/app-runtime.unit.test.ts',
      'test/artifacts/app-session.unit.test.ts',
      'test/artifacts/app-manifests.unit.test.ts',
      'test/artifacts/artifact-versions.unit.test.ts',
      'test/artifacts/artifact-content.unit.test.ts',
      'test/artifacts/artifact-views.unit.test.ts',
      'test/artifacts/app-manifest.unit.test.ts',
      'test/artifacts/app-manifest-spellings.unit.test.ts',
      'test/artifacts/artifact-content-type.unit.test.ts',
      'test/artifacts/artifacts.test.ts',
      'test/artifacts/artifact-sharing.test.ts',
      'test/artifacts/artifacts-workflows.test.ts',
      'test/artifacts/app-manifests.test.ts',
      'test/artifacts/apps.test.ts',
      'test/artifacts/chain-apps.test.ts',
      // The repositories' filters, case folding, pin order and legacy approvals, over the database.
      'test/artifacts/artifacts-repository.test.ts',
    ],
  },
  // The chain-step engine and its activities: a step's model call, tools, fan-out, guards, stores and billing.
  chains: {
    mutate: [
      'lib/chains/engine/**/*.ts',
      'lib/chains/fan-out-limit.ts',
      'lib/chains/run-plan.ts',
      'activities/chains/**/*.ts',
    ],
    spec: [
      'test/chains/engine-helpers.unit.test.ts',
      'test/chains/fan-out-limit.unit.test.ts',
      'test/chains/step-model.unit.test.ts',
      'test/chains/step-model-tools.unit.test.ts',
      'test/chains/heartbeats.unit.test.ts',
      'test/chains/step-tools.unit.test.ts',
      'test/chains/step-runner-guards.unit.test.ts',
      'test/chains/step-runner-results.unit.test.ts',
      'test/chains/step-runner-settle.unit.test.ts',
      'test/chains/finish-run.unit.test.ts',
      'test/chains/ask-model-billing.unit.test.ts',
      'test/chains/fan-out-elements.unit.test.ts',
      'test/chains/fan-out-collect.unit.test.ts',
      'test/chains/execution-snapshot.unit.test.ts',
      'test/chains/write-through-run-store.unit.test.ts',
      'test/chains/write-behind-run-store.unit.test.ts',
      'test/chains/chain-activities.unit.test.ts',
      'test/chains/chain-activities-runs.unit.test.ts',
      'test/chains/execution-cache.unit.test.ts',
      'test/chains/fan-out-selection.unit.test.ts',
      'test/chains/step-tool-scopes.unit.test.ts',
      'test/chains/pending-payments.unit.test.ts',
      'test/chains/chain-runs.test.ts',
      'test/chains/chain-run-cache.test.ts',
      'test/chains/chain-run-reruns.test.ts',
      'test/chains/chain-step-hand-on.test.ts',
      'test/chains/chain-step-model.test.ts',
      'test/chains/chain-step-payments.test.ts',
      'test/chains/chain-step-writes.test.ts',
      'test/chains/chain-write-through.test.ts',
      'test/chains/chain-fan-out-limit.test.ts',
      'test/chains/chain-integrations.test.ts',
    ],
  },
  // The rest of lib/chains: the chain and run services and repositories, the step fields, prompts and expressions,
  // generated steps and the workflow catalog, reached through the API.
  'chains-api': {
    mutate: [
      'lib/chains/*.ts',
      '!lib/chains/*.schema.ts',
      '!lib/chains/fan-out-limit.ts',
      '!lib/chains/run-plan.ts',
    ],
    spec: [
      'test/chains/step-fields.unit.test.ts',
      'test/chains/chain-views.unit.test.ts',
      'test/chains/step-prompt.unit.test.ts',
      'test/chains/workflow-catalog.unit.test.ts',
      'test/chains/chains-service.unit.test.ts',
      'test/chains/chain-attachments.unit.test.ts',
      'test/chains/chain-runs-service.unit.test.ts',
      'test/chains/step-from-prompt.unit.test.ts',
      'test/chains/expression-budgets.unit.test.ts',
      'test/chains/template-budgets.unit.test.ts',
      'test/chains/generated-step.unit.test.ts',
      'test/chains/fan-out-selection.unit.test.ts',
      'test/chains/chains-repository.test.ts',
      'test/chains/chain-runs-repository.test.ts',
      'test/chains/step-attachments-repository.test.ts',
      'test/chains/chains.test.ts',
      'test/chains/chains-from-prompt.test.ts',
      'test/chains/chain-runs.test.ts',
      'test/chains/chain-run-reruns.test.ts',
      'test/chains/chain-step-writes.test.ts',
      'test/chains/chain-integrations.test.ts',
    ],
    // The operator CLI's grant runs in a child process, where no mutant is active, and needs stack/.
    grep: '^(?!.*a grant lets it work again)',
  },
  // The browse tool's allow-list, on its own: its tests are unit tests, the page guard's need Chromium.
  'allow-list': {
    mutate: ['lib/browser-sessions/allow-list.ts'],
    spec: ['test/conversations/allow-list.unit.test.ts'],
  },
  'page-guard': {
    mutate: ['lib/browser-sessions/page-guard.ts'],
    spec: [
      'test/conversations/page-guard.unit.test.ts',
      'test/conversations/page-guard-redirects.unit.test.ts',
      'test/conversations/browser-sessions.test.ts',
      'test/conversations/browser-session-limits.test.ts',
    ],
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
  // The chains area's first run covers its integration tests: longer than the default 5 minutes on a busy machine.
  dryRunTimeoutMinutes: 30,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  thresholds: { high: 90, low: 80, break: 80 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
