import { DefaultLogger, Runtime } from '@temporalio/worker';
import { closeTestEnv } from './helpers/env';

// Workers in tests log only warnings and errors (before any worker is created).
Runtime.install({ logger: new DefaultLogger('WARN') });

// Root hook: release connections once every test file has run.
export const mochaHooks = {
  async afterAll() {
    await closeTestEnv();
  },
};
