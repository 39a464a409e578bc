import { closeTestEnv } from './helpers/env';

// Root hook: release connections once every test file has run.
export const mochaHooks = {
  async afterAll() {
    await closeTestEnv();
  },
};
