import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createMailer } from '@lib/mail';
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
  const mailer = createMailer(env.config.mail.smtpUrl, env.config.mail.from);
  const { worker, connection } = await createWorker(
    env.config.temporal,
    { mailer, publicBaseUrl: env.config.publicBaseUrl },
    { workflowBundle: await workflowBundle() },
  );
  const running = worker.run();
  return {
    worker,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      mailer.close();
    },
  };
}
