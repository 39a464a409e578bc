import { DefaultLogger, Runtime } from '@temporalio/worker';
import fc from 'fast-check';
import { closeTestEnv, forgetTestScript } from './helpers/env';

// Workers in tests log only warnings and errors (before any worker is created).
Runtime.install({ logger: new DefaultLogger('WARN') });

// Property tests (fast-check) print the seed of a failure; FC_SEED=<seed> runs them again with it.
if (process.env.FC_SEED) fc.configureGlobal({ seed: Number(process.env.FC_SEED) });

// Root hooks: each test starts from an unscripted LLM; connections are released once every file has run.
export const mochaHooks = {
  async afterEach() {
    await forgetTestScript();
  },
  async afterAll() {
    await closeTestEnv();
  },
};
