import { createTestAgent } from '@test/helpers/agents';
import { as } from '@test/helpers/org';
import type { connectClient } from '@test/helpers/realtime';
import { useWorkerAndOrg } from '@test/helpers/worker';

/**
 * The shared setup of the task-plan suites: a worker, a fresh 'Plan Org' per test, and the plan
 * helpers. Call inside a describe; `suite.env`/`suite.org` are set in the hooks, the helpers read
 * them when called.
 */
export function useTaskPlanSuite() {
  const suite = useWorkerAndOrg('Plan Org');

  const plansPath = (conversationId: string, suffix = '') =>
    suite.org.path(`/conversations/${conversationId}/task-plans${suffix}`);

  async function planningAgent() {
    const { env, org } = suite;
    const agent = await createTestAgent(env, org.organizationId);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${agent.agentId}/tools`), { toolCode: 'task_plan', configuration: {} })
      .expect(201);
    return agent;
  }

  /** A new conversation of the owner with an agent, and a turn of it that writes plans directly. */
  async function conversationTurn(requestId: string) {
    const { env, org } = suite;
    const { agentId } = await createTestAgent(env, org.organizationId);
    const conv = await as(env, org.owner.token).post(org.path('/conversations'), { agentId }).expect(201);
    const conversationId = conv.body.conversationId as string;
    return {
      conversationId,
      turn: { organizationId: org.organizationId, agentId, conversationId, requestId },
    };
  }

  const replyEvent = (client: Awaited<ReturnType<typeof connectClient>>, requestId: string) =>
    client.waitFor((e) => e.payload.requestId === requestId && e.payload.type === 'message', 60_000);

  return { suite, plansPath, planningAgent, conversationTurn, replyEvent };
}
