import { expect } from 'chai';
import { workflowIds } from '@contracts';
import { createTestAgent } from '@test/helpers/agents';
import type { TestEnv } from '@test/helpers/env';
import { recordHistory } from '@test/helpers/histories';
import { as, type TestOrg } from '@test/helpers/org';
import { connectClient } from '@test/helpers/realtime';
import { stored } from '@test/helpers/store';
import { eventually, gate } from '@test/helpers/wait';
import { useTaskPlanSuite } from '@test/conversations/task-plan-suite';
import { type PlanView, toolResult, planEvents } from '@test/conversations/task-plan-views';

describe('task plans', () => {
  const { suite, plansPath, planningAgent, conversationTurn, replyEvent } = useTaskPlanSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  /** Starts a turn of a planning agent whose first model call makes a plan: 1 in progress, 2 pending. */
  async function turnWithPlan(message: string) {
    const agent = await planningAgent();
    env.llm.on(
      { model: agent.model },
      {
        toolCalls: [
          {
            id: 'call_c1',
            name: 'task_plan',
            arguments: {
              steps: [
                { stepId: '1', description: 'Read the inbox', status: 'in_progress' },
                { stepId: '2', description: 'Answer everyone', status: 'pending' },
              ],
            },
          },
        ],
      },
      1,
    );
    const client = await connectClient(env, org.organizationId, org.owner.token);
    const start = async () => {
      const res = await as(env, org.owner.token)
        .post(org.path('/conversations'), { agentId: agent.agentId, message })
        .expect(201);
      const { conversationId, requestId } = res.body as { conversationId: string; requestId: string };
      const created = await client.waitFor((e) => e.event === 'task-plan' && e.payload.type === 'created');
      return { conversationId, requestId, planId: (created.payload.plan as PlanView).planId };
    };
    const readPlan = async (conversationId: string, planId: string) =>
      (
        await as(env, org.owner.token)
          .get(plansPath(conversationId, `/${planId}`))
          .expect(200)
      ).body as PlanView;
    return { ...agent, client, start, readPlan };
  }

  it('execution stops after the current task completes: the step in progress finishes, no new task starts', async () => {
    const { model, client, start, readPlan } = await turnWithPlan('Clear my inbox');
    const { opened, open } = gate();
    // The second model call is under way when the cancel arrives; it tries to start step 2.
    env.llm.on(
      { model },
      async (body) => {
        await opened;
        const planId = toolResult(body).planId;
        return {
          toolCalls: [
            {
              id: 'call_c2',
              name: 'task_plan',
              arguments: { planId, steps: [{ stepId: '2', status: 'in_progress' }] },
            },
          ],
        };
      },
      1,
    );
    // Step 1 is still in progress, so the model is asked again: it finishes step 1 with its result.
    env.llm.on(
      { model },
      (body) => ({
        toolCalls: [
          {
            id: 'call_c3',
            name: 'task_plan',
            arguments: {
              planId: toolResult(body).planId,
              steps: [{ stepId: '1', status: 'completed', description: 'Read the inbox: 3 messages' }],
            },
          },
        ],
      }),
      1,
    );
    env.llm.on({ model }, { content: 'I should never be asked again.' });
    try {
      const { conversationId, requestId, planId } = await start();
      await eventually(() => env.llm.chatRequests.filter((r) => r.model === model).length === 2);

      const cancel = await as(env, org.owner.token)
        .post(plansPath(conversationId, `/${planId}/cancel`))
        .expect(200);
      expect(cancel.body).to.deep.equal({
        success: true,
        message: 'the plan is cancelled; the agent stops after its current task',
        planId,
      });
      open();
      const reply = await replyEvent(client, requestId);
      const message = reply.payload.message as { content: Array<{ text: string }> };
      expect(message.content[0]!.text).to.equal('Stopped: the task plan was cancelled.');
      expect(env.llm.chatRequests.filter((r) => r.model === model)).to.have.length(3);
      const refused = client
        .turn(requestId)
        .find(
          (e) =>
            e.event === 'tool-update' && e.payload.toolCallId === 'call_c2' && e.payload.status === 'failed',
        );
      expect(refused?.payload.error).to.match(/the plan is cancelled: only the step in progress may finish/);
      expect(planEvents(client.events).map((e) => e.payload.type)).to.deep.equal([
        'created',
        'cancelled',
        'updated',
      ]);

      const plan = await readPlan(conversationId, planId);
      expect(plan.status).to.equal('cancelled');
      expect(plan.steps).to.deep.equal([
        { stepId: '1', description: 'Read the inbox: 3 messages', status: 'completed' },
        { stepId: '2', description: 'Answer everyone', status: 'cancelled' },
      ]);
      expect((await as(env, org.owner.token).get(plansPath(conversationId)).expect(200)).body).to.deep.equal(
        [],
      );
      const again = await as(env, org.owner.token)
        .post(plansPath(conversationId, `/${planId}/cancel`))
        .expect(200);
      expect(again.body).to.deep.equal({ success: true, message: 'the plan was already cancelled', planId });
      await recordHistory(
        env,
        workflowIds.turn(org.organizationId, conversationId, requestId),
        'turn-task-plan-cancel-finishes-step',
      );
    } finally {
      open();
      client.close();
    }
  });

  it('a step still in progress when the turn that was cancelling it ends is cancelled', async () => {
    const { model, client, start, readPlan } = await turnWithPlan('Clear my inbox');
    const { opened, open } = gate();
    env.llm.on(
      { model },
      async () => {
        await opened;
        return { content: 'Done for now.' };
      },
      1,
    );
    try {
      const { conversationId, requestId, planId } = await start();
      await eventually(() => env.llm.chatRequests.filter((r) => r.model === model).length === 2);
      await as(env, org.owner.token)
        .post(plansPath(conversationId, `/${planId}/cancel`))
        .expect(200);
      open();
      const reply = await replyEvent(client, requestId);
      expect((reply.payload.message as { content: Array<{ text: string }> }).content[0]!.text).to.equal(
        'Done for now.',
      );
      // The turn ends what it left in progress before it saves its reply.
      const plan = await readPlan(conversationId, planId);
      expect(plan.steps.map((s) => s.status)).to.deep.equal(['cancelled', 'cancelled']);
    } finally {
      open();
      client.close();
    }
  });

  it('a cancel with no turn working on the plan cancels its step in progress too: nothing will finish it', async () => {
    const { agentId } = await createTestAgent(env, org.organizationId);
    const conv = await as(env, org.owner.token).post(org.path('/conversations'), { agentId }).expect(201);
    const conversationId = conv.body.conversationId as string;
    const plan = await env.deps.services.taskPlans.writeFromTool(
      { organizationId: org.organizationId, agentId, conversationId, requestId: 'r-gone' },
      {
        steps: [
          { stepId: 'a', description: 'A', status: 'completed' },
          { stepId: 'b', description: 'B', status: 'in_progress' },
          { stepId: 'c', description: 'C', status: 'pending' },
        ],
      },
    );
    const res = await as(env, org.owner.token)
      .post(plansPath(conversationId, `/${plan.planId}/cancel`))
      .expect(200);
    expect(res.body.message).to.equal('the plan is cancelled; no turn was working on it');
    const after = await as(env, org.owner.token)
      .get(plansPath(conversationId, `/${plan.planId}`))
      .expect(200);
    expect((after.body as PlanView).steps.map((s) => s.status)).to.deep.equal([
      'completed',
      'cancelled',
      'cancelled',
    ]);
  });

  it('POST cancel returns { success, message, planId }: a completed or failed plan answers success false and stays', async () => {
    const { conversationId, turn } = await conversationTurn('r-final');
    const { taskPlans } = env.deps.services;
    const done = await taskPlans.writeFromTool(turn, {
      steps: [{ stepId: 'a', description: 'A', status: 'pending' }],
    });
    await taskPlans.writeFromTool(turn, {
      planId: done.planId,
      steps: [{ stepId: 'a', status: 'completed' }],
    });
    const given = await taskPlans.writeFromTool(turn, {
      steps: [{ stepId: 'b', description: 'B', status: 'pending' }],
    });
    await taskPlans.writeFromTool(turn, { planId: given.planId, status: 'failed', steps: [] });
    for (const [planId, status] of [
      [done.planId, 'completed'],
      [given.planId, 'failed'],
    ] as const) {
      const res = await as(env, org.owner.token)
        .post(plansPath(conversationId, `/${planId}/cancel`))
        .expect(200);
      expect(res.body).to.deep.equal({
        success: false,
        message: `the plan is already ${status}; only an active plan can be cancelled`,
        planId,
      });
      const after = await as(env, org.owner.token)
        .get(plansPath(conversationId, `/${planId}`))
        .expect(200);
      expect(after.body.status).to.equal(status);
    }
  });

  it('lists the active plans oldest first, answers an unknown plan "task plan not found", and deletes only the deleted conversation\'s plans', async () => {
    const { agentId } = await createTestAgent(env, org.organizationId);
    const open = async () =>
      (await as(env, org.owner.token).post(org.path('/conversations'), { agentId }).expect(201)).body
        .conversationId as string;
    const [kept, gone] = [await open(), await open()];
    const write = (conversationId: string, stepId: string) =>
      env.deps.services.taskPlans.writeFromTool(
        { organizationId: org.organizationId, agentId, conversationId, requestId: `r-${stepId}` },
        { steps: [{ stepId, description: stepId, status: 'pending' }] },
      );
    const first = await write(kept, 'first');
    const second = await write(kept, 'second');
    await write(gone, 'other');
    const list = (await as(env, org.owner.token).get(plansPath(kept)).expect(200)).body as PlanView[];
    expect(list.map((p) => p.planId)).to.deep.equal([first.planId, second.planId]);
    const missing = await as(env, org.owner.token).get(plansPath(kept, '/tpl_nope')).expect(404);
    expect(missing.body.error.message).to.equal('task plan not found');
    await as(env, org.owner.token)
      .delete(org.path(`/conversations/${gone}`))
      .expect(200);
    expect(await stored(env, 'task_plans').countDocuments({ conversationId: gone })).to.equal(0);
    expect(await stored(env, 'task_plans').countDocuments({ conversationId: kept })).to.equal(2);
  });
});
