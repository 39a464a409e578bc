import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createWorkerDeps } from '@worker/worker-deps';
import { createWorker } from '@worker/create-worker';
import { testEnv, type TestEnv } from './env';
import { createTestOrg, type TestOrg } from './org';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** Bundling takes seconds: do it once per run and give every test worker the same bundle. */
export function workflowBundle() {
  bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('@workflows/index'), logger: silentLogger });
  return bundle;
}

const noop = () => undefined;
const silentLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

/** Runs a real worker on the env's task queue until stop() is called. */
export async function startTestWorker(env: TestEnv) {
  const resources = await createWorkerDeps(env.config);
  const { worker, connection } = await createWorker(env.config.temporal, resources.deps, {
    workflowBundle: await workflowBundle(),
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await resources.close();
    },
  };
}

/**
 * Mocha hooks for a suite that runs workflows: a real worker for the whole suite and a fresh organization
 * for every test. Read `suite.env` and `suite.org` inside tests.
 */
export function useWorkerAndOrg(orgName: string) {
  const suite = {} as { env: TestEnv; org: TestOrg };
  let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
  before(async () => {
    suite.env = await testEnv();
    worker = await startTestWorker(suite.env);
  });
  after(async () => worker?.stop());
  beforeEach(async () => {
    suite.org = await createTestOrg(suite.env, orgName);
  });
  return suite;
}
