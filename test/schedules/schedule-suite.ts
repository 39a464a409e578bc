import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';

// A cron that fires once a year: nothing fires by itself while the tests run.
export const YEARLY = '0 0 1 1 *';

/**
 * The shared setup of the schedule management suites: the environment for the describe, a fresh
 * 'Schedules Org' per test, and the request helpers. Call inside a describe; `suite.env`/`suite.org`
 * are set in the hooks, the helpers read them when called.
 */
export function useScheduleSuite() {
  const suite = {} as { env: TestEnv; org: TestOrg };
  before(async () => {
    suite.env = await testEnv();
  });
  beforeEach(async () => {
    suite.org = await createTestOrg(suite.env, 'Schedules Org');
  });

  const admin = () => as(suite.env, suite.org.admin.token);

  async function createChain(target = suite.org) {
    const res = await as(suite.env, target.admin.token)
      .post(target.path('/chains'), {
        name: 'Digest',
        description: 'Daily digest',
        llmInstructions: 'Be brief.',
        steps: [{ stepOrder: 1, instructions: 'Summarise' }],
      })
      .expect(201);
    return res.body.actionChainId as string;
  }

  async function createSchedule(body: Record<string, unknown> = {}) {
    const res = await admin()
      .post(suite.org.path('/schedules'), { name: 'Digest', cronExpression: YEARLY, ...body })
      .expect(201);
    return res.body as { triggerId: string; cronExpression: string };
  }

  return { suite, admin, createChain, createSchedule };
}
