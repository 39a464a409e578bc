import { expect } from 'chai';
import { loadConfig } from '@lib/config';
import { createWorker } from '@worker/create-worker';
import { testEnv } from '@test/helpers/env';
import { eventually } from '@test/helpers/wait';
import { workflowBundle } from '@test/helpers/worker';

// Temporal's core evicts a cached workflow only when it needs the place, so finished workflows stay in memory up to
// the cache's size; the SDK's default size follows the heap limit (2,395 per queue on a 4 GB heap).
// WORKER_MAX_CACHED_WORKFLOWS bounds it on both workflow queues.
describe("the worker's workflow cache", () => {
  it('holds at most WORKER_MAX_CACHED_WORKFLOWS workflows on each workflow queue (500 unless set)', async function () {
    this.timeout(120_000);
    const defaults = loadConfig({ JWT_SECRET: 'a-secret-long-enough-for-any-rule-0123456789abcdef' });
    expect(defaults.temporal.maxCachedWorkflows).to.equal(500);
    const env = await testEnv();
    const { worker, connection, workflowWorkers } = await createWorker(
      { ...env.config.temporal, maxCachedWorkflows: 7 },
      env.deps,
      { workflowBundle: await workflowBundle() },
    );
    const running = worker.run();
    try {
      await eventually(() => worker.getState() === 'RUNNING');
      expect(workflowWorkers.map((w) => w.options.maxCachedWorkflows)).to.deep.equal([7, 7]);
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  });
});
