import { DefaultLogger, Runtime } from '@temporalio/worker';
import { closeTestEnv, forgetTestScript } from './helpers/env';

// Workers in tests log only warnings and errors (before any worker is created).
Runtime.install({ logger: new DefaultLogger('WARN') });

// Root hooks: each test starts from an unscripted LLM; connections are released once every file has run.
export const mochaHooks = {
  async afterEach() {
    await forgetTestScript();
  },
  async afterAll() {
    await closeTestEnv();
  },
};
