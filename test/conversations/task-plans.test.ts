import { expect } from 'chai';
import { createTestAgent } from '@test/helpers/agents';
import type { TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { connectClient } from '@test/helpers/realtime';
import { stored } from '@test/helpers/store';
import { eventually } from '@test/helpers/wait';
import { useTaskPlanSuite } from '@test/conversations/task-plan-suite';
import { type PlanView, toolResult, planEvents } from '@test/conversations/task-plan-views';

describe('task plans', () => {
  const { suite, plansPath, planningAgent, conversationTurn, replyEvent } = useTaskPlanSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  it('lets the agent create and update a plan, stores it and pushes each change to the conversation', async () => {
    const { agentId, model } = await planningAgent();
    env.llm.on(
      { model },
      {
        toolCalls: [
          {
            id: 'call_p1',
            name: 'task_plan',
            arguments: {
              steps: [
                { stepId: '1', description: 'Collect the figures', status: 'in_progress' },
                { stepId: '2', description: 'Write the summary', status: 'pending' },
              ],
            },
          },
        ],
      },
      1,
    );
    env.llm.on(
      { model },
      (body) => ({
        toolCalls: [
          {
            id: 'call_p2',
            name: 'task_plan',
            arguments: {
              planId: toolResult(body).planId,
              steps: [
                { stepId: '1', status: 'completed' },
                { stepId: '2', status: 'in_progress' },
              ],
            },
          },
        ],
      }),
      1,
    );
    env.llm.on({ model }, { content: 'Figures collected; writing the summary next.' }, 1);
    const client = await connectClient(env, org.organizationId, org.owner.token);
    try {
      const res = await as(env, org.owner.token)
        .post(org.path('/conversations'), { agentId, message: 'Summarise the quarter' })
        .expect(201);
      const { conversationId, requestId } = res.body as { conversationId: string; requestId: string };
      await replyEvent(client, requestId);
      const events = planEvents(client.events);
      expect(events.map((e) => e.payload.type)).to.deep.equal(['created', 'updated']);
      for (const e of events) expect(e.payload).to.include({ conversationId, requestId });
      const pushed = events[1]!.payload.plan as PlanView;
      expect(pushed.steps.map((s) => s.status)).to.deep.equal(['completed', 'in_progress']);

      const list = (await as(env, org.owner.token).get(plansPath(conversationId)).expect(200))
        .body as PlanView[];
      expect(list).to.have.length(1);
      expect(list[0]).to.deep.include({
        planId: pushed.planId,
        conversationId,
        organizationId: org.organizationId,
        agentId,
        type: 'general',
        status: 'active',
        requestId,
      });
      expect(list[0]!.steps).to.deep.equal([
        { stepId: '1', description: 'Collect the figures', status: 'completed' },
        { stepId: '2', description: 'Write the summary', status: 'in_progress' },
      ]);
      const one = await as(env, org.owner.token)
        .get(plansPath(conversationId, `/${pushed.planId}`))
        .expect(200);
      expect(one.body).to.deep.equal(list[0]);

      // A later turn finishes the plan: it is completed, and no longer listed as active.
      env.llm.on(
        { model },
        {
          toolCalls: [
            {
              id: 'call_p3',
              name: 'task_plan',
              arguments: { planId: pushed.planId, steps: [{ stepId: '2', status: 'completed' }] },
            },
          ],
        },
        1,
      );
      env.llm.on({ model }, { content: 'Done.' }, 1);
      const next = await as(env, org.owner.token)
        .post(org.path('/conversations'), { agentId, conversationId, message: 'Finish it' })
        .expect(201);
      await replyEvent(client, next.body.requestId as string);
      const finished = (
        await as(env, org.owner.token)
          .get(plansPath(conversationId, `/${pushed.planId}`))
          .expect(200)
      ).body as PlanView;
      expect(finished.status).to.equal('completed');
      expect(finished.requestId).to.equal(next.body.requestId);
      expect((await as(env, org.owner.token).get(plansPath(conversationId)).expect(200)).body).to.deep.equal(
        [],
      );
    } finally {
      client.close();
    }
  });

  it('tells the model what is wrong with its plan instead of storing it, and types a browser task browser', async () => {
    const { agentId, model } = await planningAgent();
    env.llm.on(
      { model },
      {
        toolCalls: [
          { id: 'call_bad', name: 'task_plan', arguments: { steps: [{ stepId: '1', status: 'done' }] } },
        ],
      },
      1,
    );
    env.llm.on(
      { model },
      (body) => {
        expect(toolResult(body).error).to.match(/steps\[0\]\.status must be one of pending, in_progress/);
        return {
          toolCalls: [
            {
              id: 'call_ok',
              name: 'task_plan',
              arguments: { steps: [{ stepId: 'open', description: 'Open the site', status: 'pending' }] },
            },
          ],
        };
      },
      1,
    );
    env.llm.on({ model }, (body) => ({ content: `Planned ${toolResult(body, 1).type}.` }), 1);
    const res = await as(env, org.owner.token)
      .post(org.path('/conversations'), { agentId, message: 'Book a table', isBrowserTask: true })
      .expect(201);
    const conversationId = res.body.conversationId as string;
    const reply = await eventually(async () => {
      const conv = await as(env, org.owner.token).get(org.path(`/conversations/${conversationId}`));
      return (conv.body.messages as Array<{ role: string; content: Array<{ text: string }> }>).find(
        (m) => m.role === 'assistant',
      );
    }, 60_000);
    expect(reply.content[0]!.text).to.equal('Planned browser.');
    const list = (await as(env, org.owner.token).get(plansPath(conversationId)).expect(200))
      .body as PlanView[];
    expect(list.map((p) => [p.type, p.steps.length])).to.deep.equal([['browser', 1]]);
  });

  it("never lets a turn change the plan of another conversation, another member's included", async () => {
    const { agentId, model } = await planningAgent();
    // a default group with full access: the chat member may use the agent too
    await as(env, org.owner.token)
      .post(org.path('/groups'), { name: 'Everyone', description: '', isDefault: true, fullAccess: true })
      .expect(201);
    const ownerConv = await as(env, org.owner.token)
      .post(org.path('/conversations'), { agentId })
      .expect(201);
    const theirs = await env.deps.services.taskPlans.writeFromTool(
      {
        organizationId: org.organizationId,
        agentId,
        conversationId: ownerConv.body.conversationId as string,
        requestId: 'r-owner',
      },
      { steps: [{ stepId: 'a', description: 'Pay the invoices', status: 'pending' }] },
    );
    env.llm.on(
      { model },
      {
        toolCalls: [
          {
            id: 'call_x',
            name: 'task_plan',
            arguments: { planId: theirs.planId, steps: [{ stepId: 'a', status: 'skipped' }] },
          },
        ],
      },
      1,
    );
    env.llm.on({ model }, (body) => ({ content: `tool said: ${toolResult(body).error}` }), 1);
    const client = await connectClient(env, org.organizationId, org.chat.token);
    try {
      const res = await as(env, org.chat.token)
        .post(org.path('/conversations'), { agentId, message: 'Skip the invoices' })
        .expect(201);
      await replyEvent(client, res.body.requestId as string);
    } finally {
      client.close();
    }
    const told = env.llm.chatRequests.filter((b) => b.model === model).at(-1)!;
    expect(toolResult(told).error).to.equal(`there is no plan ${theirs.planId} in this conversation`);
    const after = (
      await as(env, org.owner.token)
        .get(plansPath(ownerConv.body.conversationId as string, `/${theirs.planId}`))
        .expect(200)
    ).body as PlanView;
    expect(after).to.deep.include({ status: 'active', requestId: 'r-owner' });
    expect(after.steps).to.deep.equal([{ stepId: 'a', description: 'Pay the invoices', status: 'pending' }]);
  });

  it('shows plans only to those who may read the conversation, and answers bad input with 4xx', async () => {
    const { agentId } = await createTestAgent(env, org.organizationId);
    const conv = await as(env, org.owner.token).post(org.path('/conversations'), { agentId }).expect(201);
    const conversationId = conv.body.conversationId as string;
    const plan = await env.deps.services.taskPlans.writeFromTool(
      { organizationId: org.organizationId, agentId, conversationId, requestId: 'r-1' },
      { steps: [{ stepId: 'a', description: 'Do a thing', status: 'pending' }] },
    );
    const other = await createTestOrg(env, 'Other Org');
    const notFound = (r: { body: { error: { code: string } } }) =>
      expect(r.body.error.code).to.equal('not_found');
    // Another member's conversation, another organization's token, an unknown or mismatched plan: 404 alike.
    await as(env, org.chat.token).get(plansPath(conversationId)).expect(404).expect(notFound);
    await as(env, org.chat.token)
      .post(plansPath(conversationId, `/${plan.planId}/cancel`))
      .expect(404)
      .expect(notFound);
    await as(env, other.owner.token)
      .get(other.path(`/conversations/${conversationId}/task-plans/${plan.planId}`))
      .expect(404)
      .expect(notFound);
    await as(env, org.owner.token).get(plansPath(conversationId, '/tpl_nope')).expect(404).expect(notFound);
    const conv2 = await as(env, org.owner.token).post(org.path('/conversations'), { agentId }).expect(201);
    await as(env, org.owner.token)
      .get(plansPath(conv2.body.conversationId as string, `/${plan.planId}`))
      .expect(404)
      .expect(notFound);
    await as(env, org.owner.token)
      .get(plansPath(conversationId, `/${'x'.repeat(101)}`))
      .expect(400)
      .expect((r) => expect(r.body.error.code).to.equal('validation_failed'));
    // The admin reads every conversation, so every plan; with no turn running, a cancel says so.
    const cancel = await as(env, org.admin.token)
      .post(plansPath(conversationId, `/${plan.planId}/cancel`))
      .expect(200);
    expect(cancel.body.message).to.equal('the plan is cancelled; no turn was working on it');

    await as(env, org.owner.token)
      .delete(org.path(`/conversations/${conversationId}`))
      .expect(200);
    expect(await stored(env, 'task_plans').countDocuments({ conversationId })).to.equal(0);
  });

  it('keeps a plan its type, refuses a plan for a conversation that is gone, and loses no write to a stale read', async () => {
    const { turn } = await conversationTurn('r-rules');
    const { taskPlans } = env.deps.services;
    const plan = await taskPlans.writeFromTool(turn, {
      steps: [{ stepId: 'a', description: 'A', status: 'pending' }],
    });
    expect(plan.type).to.equal('general');
    const refused = (p: Promise<unknown>) =>
      p.then(
        () => expect.fail('accepted'),
        (err: unknown) => (err as Error).message,
      );
    expect(
      await refused(
        taskPlans.writeFromTool(turn, {
          planId: plan.planId,
          type: 'browser',
          steps: [{ stepId: 'a', status: 'completed' }],
        }),
      ),
    ).to.equal("the plan's type is general; it cannot change");
    // Naming the type it already has is no change.
    const same = await taskPlans.writeFromTool(turn, {
      planId: plan.planId,
      type: 'general',
      steps: [{ stepId: 'a', status: 'in_progress' }],
    });
    expect(same.steps[0]!.status).to.equal('in_progress');
    expect(
      await refused(
        taskPlans.writeFromTool(
          { ...turn, conversationId: 'conv_gone' },
          {
            steps: [{ stepId: 'a', description: 'A', status: 'pending' }],
          },
        ),
      ),
    ).to.equal('the conversation no longer exists');
    // A write computed from a read the plan has since moved past changes nothing (docs/agents.md "Task plans": two writers never lose
    // each other's steps).
    const repo = env.deps.repos.tenant(org.organizationId).taskPlans;
    const stale = (await repo.get(plan.planId))!;
    await taskPlans.writeFromTool(turn, {
      planId: plan.planId,
      steps: [{ stepId: 'b', description: 'B', status: 'pending' }],
    });
    expect(await repo.replaceIfUnchanged(stale, { steps: [], status: 'failed' })).to.equal(null);
    const after = (await repo.get(plan.planId))!;
    expect(after.status).to.equal('active');
    expect(after.steps.map((step) => step.stepId)).to.deep.equal(['a', 'b']);
  });
});
