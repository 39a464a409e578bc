import { DefaultLogger, Runtime } from '@temporalio/worker';
import fc from 'fast-check';
import type * as EnvHelper from './helpers/env';
import type * as WorkerProcessHelper from './helpers/worker-process';

// Workers in tests log only warnings and errors (before any worker is created).
Runtime.install({ logger: new DefaultLogger('WARN') });

// Property tests (fast-check) print the seed of a failure; FC_SEED=<seed> runs them again with it.
if (process.env.FC_SEED) fc.configureGlobal({ seed: Number(process.env.FC_SEED) });

// The test environment helper holds the scripted LLM and the connections. It is read only once a test file has
// loaded it: until then there is nothing to forget or release, and unit tests never load the whole app for it.
const envHelper = () =>
  require.cache[require.resolve('./helpers/env')]?.exports as typeof EnvHelper | undefined;
const workerProcessHelper = () =>
  require.cache[require.resolve('./helpers/worker-process')]?.exports as
    typeof WorkerProcessHelper | undefined;

// Root hooks: each test starts from an unscripted LLM and with no reconciler Schedule a worker process left
// behind; connections are released once every file has run.
export const mochaHooks = {
  async afterEach() {
    await envHelper()?.forgetTestScript();
    const workers = workerProcessHelper();
    const env = envHelper();
    // Best effort: a test that made Temporal unreachable must not fail the hook (and with it the rest of the
    // suite); the next test's hook tries again.
    if (env && workers?.workerProcessesStarted())
      await workers
        .removeReconcilerSchedules((await env.testEnv()).deps.temporal.client)
        .catch(() => undefined);
  },
  async afterAll() {
    await envHelper()?.closeTestEnv();
  },
};
