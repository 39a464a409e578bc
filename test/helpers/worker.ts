import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { createWorker } from '@worker/create-worker';
import { bundleWorkflows } from '@worker/workflow-bundle';
import { testEnv, type TestEnv } from './env';
import { mutationTestingWorkerOptions } from './mutation';
import { createTestOrg, type TestOrg } from './org';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** Bundling takes seconds: do it once per run and give every test worker the same bundle. */
export function workflowBundle() {
  bundle ??= bundleWorkflows({ logger: silentLogger });
  return bundle;
}

const noop = () => undefined;
const silentLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

/** Runs a real worker on the task queue of `env.config` until stop() is called (tests and bench/chains). */
export async function startTestWorker(env: Pick<TestEnv, 'config'>) {
  const deps = await createDeps(env.config, { logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
  const { worker, connection } = await createWorker(env.config.temporal, deps, {
    workflowBundle: await workflowBundle(),
    ...mutationTestingWorkerOptions(),
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await closeDeps(deps);
    },
  };
}

/**
 * Mocha hooks for a suite that runs workflows: a real worker for the whole suite and a fresh organization
 * for every test (on `environment`: the shared scripted-LLM one unless given). Read `suite.env` and `suite.org`
 * inside tests.
 */
export function useWorkerAndOrg(orgName: string, environment: () => Promise<TestEnv> = testEnv) {
  const suite = {} as { env: TestEnv; org: TestOrg };
  let worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
  before(async () => {
    suite.env = await environment();
    worker = await startTestWorker(suite.env);
  });
  after(async () => worker?.stop());
  beforeEach(async () => {
    suite.org = await createTestOrg(suite.env, orgName);
  });
  return suite;
}
