import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createWorkerDeps } from '@worker/worker-deps';
import { createWorker } from '@worker/create-worker';
import type { TestEnv } from './env';

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
