import { closeTestEnv, testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';
import { startTestWorker } from '@test/helpers/worker';

/**
 * The shared setup of the chain-run suites: the environment and a worker with small fan-out slices for
 * the describe, and a fresh 'Chain Runs Org' per test. Call inside a describe; `suite.env`/`suite.org`
 * are set in the hooks.
 */
export function useChainRunSuite() {
  const suite = {} as { env: TestEnv; org: TestOrg };
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  before(async () => {
    suite.env = await testEnv();
    const { env } = suite;
    // Small fan-out slices, so a handful of elements already spans several child workflows.
    worker = await startTestWorker({
      config: { ...env.config, chains: { ...env.config.chains, fanOutBatch: 2, fanOutConcurrency: 2 } },
    });
  });
  after(async () => {
    await worker.stop();
    await closeTestEnv();
  });
  beforeEach(async () => {
    suite.org = await createTestOrg(suite.env, 'Chain Runs Org');
  });
  return suite;
}
