import request from 'supertest';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';

/**
 * The shared setup of the webhook management suites: the environment for the describe, a fresh
 * 'Webhooks Org' per test, and the request helpers. Call inside a describe; `suite.env`/`suite.org`
 * are set in the hooks, the helpers read them when called.
 */
export function useWebhookSuite() {
  const suite = {} as { env: TestEnv; org: TestOrg };
  before(async () => {
    suite.env = await testEnv();
  });
  beforeEach(async () => {
    suite.org = await createTestOrg(suite.env, 'Webhooks Org');
  });

  const admin = () => as(suite.env, suite.org.admin.token);
  const execute = (target: TestOrg, webhookId: string) =>
    request(suite.env.app).post(target.path(`/webhooks/${webhookId}/execute`));

  async function createChain() {
    const res = await admin()
      .post(suite.org.path('/chains'), {
        name: 'Triage',
        description: 'x',
        llmInstructions: 'Be brief.',
        steps: [{ stepOrder: 1, instructions: 'Triage' }],
      })
      .expect(201);
    return res.body.actionChainId as string;
  }

  async function createWebhook(body: Record<string, unknown> = {}) {
    const res = await admin()
      .post(suite.org.path('/webhooks'), { name: 'Events', ...body })
      .expect(201);
    return res.body as { webhookId: string; signingSecret?: string; executeUrl: string };
  }

  return { suite, admin, execute, createChain, createWebhook };
}
