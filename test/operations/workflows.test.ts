import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import {
  FAILURES,
  frontendToolResultSignal,
  WORKFLOWS,
  type AgentCallInput,
  type InvitationInput,
  type AgentLoopSetup,
  type ModelCall,
  type ModelReply,
  type ModelTool,
  type TurnInput,
  type TurnResult,
  type TurnSetup,
} from '@contracts';
import { MAX_AGENT_DEPTH, MAX_TOOL_ROUNDS } from '@workflows/agent-loop';
import { FRONTEND_TOOL_TIMEOUT, INPUT_SETUP_FRESH_MS } from '@workflows/turn';
import { mutationTestingWorkerOptions } from '@test/helpers/mutation';
import { startTimeSkippingEnv } from '@test/helpers/time-skipping';
import { workflowBundle } from '@test/helpers/worker';

// The workflows alone, on Temporal's time-skipping test server, with every activity replaced: the loop's bounds
// and timers are checked exactly, and a five-minute wait takes no real time.

const ORG = 'org_wf';
const target = { organizationId: ORG, conversationId: 'cnv_1', userId: 'usr_1' };
const serverTool: ModelTool = { name: 'lookup', description: 'd', parameters: {}, executor: 'server' };
const frontendTool: ModelTool = {
  name: 'pick_colour',
  description: 'd',
  parameters: {},
  executor: 'frontend',
};
const askTool = (agentId: string): ModelTool => ({
  name: `ask_${agentId}`,
  description: 'd',
  parameters: {},
  executor: 'agent',
  targetAgentId: agentId,
});
const setupWith = (tools: ModelTool[]): AgentLoopSetup => ({
  model: 'gpt-test',
  temperature: 0,
  messages: [{ role: 'user', content: 'hi' }],
  tools,
});
const callTo = (name: string, args = '{}') => ({ id: `call_${randomUUID()}`, name, arguments: args });

/** Recorded calls of the fake activities, and what each answers (tests replace the answers). */
function fakeActivities(env: TestWorkflowEnvironment) {
  const seen = {
    models: [] as Array<ModelCall & { at: number }>,
    tools: [] as string[],
    events: [] as Array<Record<string, unknown>>,
    replies: [] as Array<{ text: string; status: string }>,
    agentCalls: [] as AgentCallInput[],
    callbacks: 0,
    callbackInputs: [] as unknown[],
    invitations: 0,
    loadTurns: 0,
  };
  const answers = {
    turnSetup: (): TurnSetup => ({ ...setupWith([serverTool]), target }),
    agentSetup: (_input: AgentCallInput): AgentLoopSetup => setupWith([]),
    reply: (_call: ModelCall): ModelReply => ({ content: 'done', toolCalls: [] }),
    tool: (): Promise<string> => Promise.resolve('{"ok":true}'),
    callback: (): Promise<void> => Promise.resolve(),
    invitation: (): Promise<{ messageId: string }> => Promise.resolve({ messageId: '<m1@test>' }),
  };
  const activities = {
    // Called inside the promise, so a setup that throws fails the activity instead of the call.
    loadTurn: () =>
      new Promise<TurnSetup>((resolve) => {
        seen.loadTurns++;
        resolve(answers.turnSetup());
      }),
    loadAgentCall: (input: AgentCallInput) => {
      seen.agentCalls.push(input);
      return Promise.resolve(answers.agentSetup(input));
    },
    callModel: async (call: ModelCall) => {
      seen.models.push({ ...call, at: await env.currentTimeMs() });
      return answers.reply(call);
    },
    runTool: ({ call }: { call: { name: string } }) => {
      seen.tools.push(call.name);
      return answers.tool();
    },
    emitTurnEvent: ({ payload }: { payload: Record<string, unknown> }) => {
      seen.events.push(payload);
      return Promise.resolve();
    },
    saveReply: ({ text, status }: { text: string; status: string }) => {
      seen.replies.push({ text, status });
      return Promise.resolve({ messageId: 'msg_1' });
    },
    postCallback: (input: unknown) => {
      seen.callbacks++;
      seen.callbackInputs.push(input);
      return answers.callback();
    },
    sendInvitationEmail: () => {
      seen.invitations++;
      return answers.invitation();
    },
  };
  return { seen, answers, activities };
}

describe('workflows on the time-skipping test server', () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await startTimeSkippingEnv();
  });
  after(async () => env?.teardown());

  /** Runs `fn` with a worker of the real workflow bundle and the fake activities. */
  async function withWorker<T>(
    fake: ReturnType<typeof fakeActivities>,
    fn: (taskQueue: string) => Promise<T>,
    taskQueue = `wf-${randomUUID()}`,
  ) {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: fake.activities,
      ...mutationTestingWorkerOptions(),
    });
    return worker.runUntil(fn(taskQueue));
  }

  const turnInput = (extra: Partial<TurnInput> = {}): TurnInput => ({
    organizationId: ORG,
    conversationId: 'cnv_1',
    agentId: 'agt_a',
    requestId: randomUUID(),
    userId: 'usr_1',
    ...extra,
  });
  const runTurn = (taskQueue: string, input = turnInput()) =>
    env.client.workflow.execute<(i: TurnInput) => Promise<TurnResult>>(WORKFLOWS.turn, {
      taskQueue,
      workflowId: `${ORG}-turn-${input.requestId}`,
      args: [input],
    });

  it('starts from a setup handed over in the input, and reads the setup again when it got stale', async () => {
    const handedOver: TurnSetup = {
      ...setupWith([]),
      messages: [{ role: 'user', content: 'from the input' }],
      target,
    };
    const fresh = fakeActivities(env);
    await withWorker(fresh, (q) => runTurn(q, turnInput({ setup: handedOver })));
    expect(fresh.seen.loadTurns).to.equal(0);
    expect(fresh.seen.models[0]!.messages).to.deep.equal([{ role: 'user', content: 'from the input' }]);
    // No worker ran the turn for longer than a setup stays fresh: the turn reads its setup (the agent may be
    // gone by now).
    const stale = fakeActivities(env);
    const taskQueue = `wf-${randomUUID()}`;
    const input = turnInput({ setup: handedOver });
    const handle = await env.client.workflow.start(WORKFLOWS.turn, {
      taskQueue,
      workflowId: `${ORG}-turn-${input.requestId}`,
      args: [input],
    });
    await env.sleep(INPUT_SETUP_FRESH_MS + 1000);
    await withWorker(stale, () => handle.result(), taskQueue);
    expect(stale.seen.loadTurns).to.equal(1);
    expect(stale.seen.models[0]!.messages).to.deep.equal([{ role: 'user', content: 'hi' }]);
  });

  it(`calls a model that always wants tools exactly ${MAX_TOOL_ROUNDS + 1} times, the last without tools`, async () => {
    const fake = fakeActivities(env);
    fake.answers.reply = (call) =>
      call.tools.length
        ? { content: '', toolCalls: [callTo('lookup'), callTo('lookup')] }
        : { content: 'final answer', toolCalls: [] };
    const result = await withWorker(fake, (q) => runTurn(q));
    expect(MAX_TOOL_ROUNDS).to.equal(8);
    expect(fake.seen.models).to.have.length(9);
    expect(fake.seen.models.slice(0, 8).every((m) => m.tools.length === 1)).to.equal(true);
    expect(fake.seen.models[8]!.tools).to.deep.equal([]);
    expect(fake.seen.tools).to.have.length(16);
    // Each round sees every earlier call and result: 1 user message + 8 × (assistant + 2 tool results).
    expect(fake.seen.models[8]!.messages).to.have.length(1 + 8 * 3);
    expect(result.status).to.equal('complete');
    expect(fake.seen.replies).to.deep.equal([{ text: 'final answer', status: 'complete' }]);
  });

  it('feeds a failing or unknown tool back to the model as an error, and still answers', async () => {
    const fake = fakeActivities(env);
    fake.answers.tool = () => Promise.reject(new Error('table is gone'));
    fake.answers.reply = (call) =>
      call.messages.length === 1
        ? { content: 'let me look', toolCalls: [callTo('lookup'), callTo('no_such_tool')] }
        : { content: 'sorry', toolCalls: [] };
    await withWorker(fake, (q) => runTurn(q));
    const results = fake.seen.models[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).to.contain('table is gone');
    expect(JSON.parse(results[1]!)).to.deep.equal({ error: 'unknown tool no_such_tool' });
    expect(fake.seen.models[1]!.messages[1]).to.include({ role: 'assistant', content: 'let me look' });
    // Only calls of the agent's own tools are announced to the client.
    expect(fake.seen.events.filter((e) => e.type === 'tool_call').map((e) => e.name)).to.deep.equal([
      'lookup',
    ]);
  });

  it(`lets agents call agents ${MAX_AGENT_DEPTH} levels deep: A→B→C→D, and D may not ask E`, async () => {
    const fake = fakeActivities(env);
    const next: Record<string, string> = { agt_a: 'agt_b', agt_b: 'agt_c', agt_c: 'agt_d', agt_d: 'agt_e' };
    fake.answers.turnSetup = () => ({ ...setupWith([askTool('agt_b')]), target });
    fake.answers.agentSetup = (input) => setupWith([askTool(next[input.agentId]!)]);
    // Every agent asks the next one once, then answers with what it heard.
    fake.answers.reply = (call) => {
      const heard = call.messages.find((m) => m.role === 'tool');
      if (heard) return { content: `heard: ${heard.content}`, toolCalls: [] };
      const ask = call.tools[0]!.name;
      return { content: '', toolCalls: [callTo(ask, JSON.stringify({ message: `question for ${ask}` }))] };
    };
    const result = await withWorker(fake, (q) => runTurn(q));
    expect(result.status).to.equal('complete');
    expect(fake.seen.agentCalls.map((c) => [c.agentId, c.depth, c.prompt])).to.deep.equal([
      ['agt_b', 1, 'question for ask_agt_b'],
      ['agt_c', 2, 'question for ask_agt_c'],
      ['agt_d', 3, 'question for ask_agt_d'],
    ]);
    expect(fake.seen.replies[0]!.text).to.equal(
      'heard: heard: heard: heard: {"error":"agents may call each other at most 3 levels deep"}',
    );
  });

  it(`gives a frontend tool ${FRONTEND_TOOL_TIMEOUT} for its result, then tells the model the client did not answer`, async () => {
    const fake = fakeActivities(env);
    fake.answers.turnSetup = () => ({ ...setupWith([frontendTool]), target });
    fake.answers.reply = (call) =>
      call.messages.length === 1
        ? { content: '', toolCalls: [callTo('pick_colour')] }
        : { content: 'ok', toolCalls: [] };
    await withWorker(fake, (q) => runTurn(q));
    const waited = fake.seen.models[1]!.at - fake.seen.models[0]!.at;
    expect(waited).to.be.at.least(5 * 60_000);
    expect(waited).to.be.below(6 * 60_000);
    const result = fake.seen.models[1]!.messages.find((m) => m.role === 'tool')!;
    expect(JSON.parse(result.content)).to.deep.equal({
      error: 'the client did not return a result in time',
    });
  });

  it('tells an agent called by another agent that no client can run its frontend tools', async () => {
    const fake = fakeActivities(env);
    fake.answers.turnSetup = () => ({ ...setupWith([askTool('agt_b')]), target });
    fake.answers.agentSetup = () => setupWith([frontendTool]);
    fake.answers.reply = (call) => {
      const heard = call.messages.find((m) => m.role === 'tool');
      if (heard) return { content: `heard: ${heard.content}`, toolCalls: [] };
      return {
        content: '',
        toolCalls: [callTo(call.tools[0]!.name, JSON.stringify({ message: 'colour?' }))],
      };
    };
    const result = await withWorker(fake, (q) => runTurn(q));
    expect(result.status).to.equal('complete');
    expect(fake.seen.replies[0]!.text).to.equal('heard: heard: {"error":"no client to run this tool"}');
  });

  it('passes the result a client signals to the model, without waiting for the timeout', async () => {
    const fake = fakeActivities(env);
    fake.answers.turnSetup = () => ({ ...setupWith([frontendTool]), target });
    const call = callTo('pick_colour');
    fake.answers.reply = (c) =>
      c.messages.length === 1 ? { content: '', toolCalls: [call] } : { content: 'blue it is', toolCalls: [] };
    const input = turnInput();
    await withWorker(fake, async (taskQueue) => {
      const handle = await env.client.workflow.start(WORKFLOWS.turn, {
        taskQueue,
        workflowId: `${ORG}-turn-${input.requestId}`,
        args: [input],
      });
      while (!fake.seen.events.some((e) => e.type === 'tool_call'))
        await new Promise((r) => setTimeout(r, 20));
      await handle.signal(frontendToolResultSignal, { toolCallId: call.id, result: { colour: 'blue' } });
      return (await handle.result()) as TurnResult;
    });
    const waited = fake.seen.models[1]!.at - fake.seen.models[0]!.at;
    expect(waited).to.be.below(60_000);
    const result = fake.seen.models[1]!.messages.find((m) => m.role === 'tool')!;
    expect(result.content).to.equal('{"colour":"blue"}');
  });

  it('stores an error reply when the model fails for good, and reports a failed callback without failing', async () => {
    const fake = fakeActivities(env);
    fake.answers.reply = () => {
      // Thrown as retryable: only the model proxy's retry policy (which lists the type) stops the retries.
      throw ApplicationFailure.retryable('model said no', FAILURES.llmRequestRejected);
    };
    fake.answers.callback = () => Promise.reject(new Error('callback host down'));
    const result = await withWorker(fake, (q) =>
      runTurn(q, turnInput({ callbackUrl: 'https://cb.example/x' })),
    );
    expect(result).to.deep.equal({ messageId: 'msg_1', status: 'error' });
    // A request the model rejects is not retried; a callback that fails is, up to 12 times in all.
    expect(fake.seen.models).to.have.length(1);
    expect(fake.seen.callbacks).to.equal(12);
    expect(fake.seen.replies[0]!.status).to.equal('error');
    expect(fake.seen.replies[0]!.text).to.match(/^The agent could not reply: /);
    expect(fake.seen.callbacks).to.be.greaterThan(1);
    expect(fake.seen.events.find((e) => e.type === 'callback_failed')).to.include({
      error: 'callback host down',
    });
  });

  it('stores an error reply when what the turn needs is gone, and posts it to the callback', async () => {
    const fake = fakeActivities(env);
    fake.answers.turnSetup = () => {
      throw ApplicationFailure.nonRetryable('agent agt_a no longer exists', FAILURES.turnTargetGone);
    };
    const input = turnInput({ callbackUrl: 'https://cb.example/turns' });
    const result = await withWorker(fake, (q) => runTurn(q, input));
    expect(result).to.deep.equal({ messageId: 'msg_1', status: 'error' });
    expect(fake.seen.models).to.deep.equal([]);
    expect(fake.seen.replies).to.deep.equal([
      { text: 'The agent could not reply: agent agt_a no longer exists', status: 'error' },
    ]);
    expect(fake.seen.callbackInputs).to.deep.equal([
      {
        url: 'https://cb.example/turns',
        payload: {
          organizationId: ORG,
          conversationId: 'cnv_1',
          agentId: 'agt_a',
          requestId: input.requestId,
          status: 'error',
          message: { messageId: 'msg_1' },
        },
      },
    ]);
  });

  // Local activities back off in the worker, out of reach of time skipping: this test waits ~56 s of real time.
  it('tries a failing read of our own database 10 times, then replies with the error', async function () {
    this.timeout(180_000);
    const fake = fakeActivities(env);
    let loads = 0;
    fake.answers.turnSetup = () => {
      loads++;
      throw new Error('database unavailable');
    };
    const result = await withWorker(fake, (q) => runTurn(q));
    expect(result.status).to.equal('error');
    expect(loads).to.equal(10);
    expect(fake.seen.replies).to.deep.equal([
      { text: 'The agent could not reply: database unavailable', status: 'error' },
    ]);
  });

  it('tries a failing tool 3 times, a refused tool call once, and gives the model each error', async () => {
    const fake = fakeActivities(env);
    fake.answers.tool = () =>
      Promise.reject(
        fake.seen.tools.length === 1
          ? ApplicationFailure.retryable('no such table', FAILURES.toolInput)
          : new Error('database is restarting'),
      );
    fake.answers.reply = (call) =>
      call.messages.length === 1
        ? { content: '', toolCalls: [callTo('lookup')] }
        : call.messages.length === 3
          ? { content: '', toolCalls: [callTo('lookup')] }
          : { content: 'sorry', toolCalls: [] };
    await withWorker(fake, (q) => runTurn(q));
    // The first call is refused once; the second fails 3 times.
    expect(fake.seen.tools).to.deep.equal(['lookup', 'lookup', 'lookup', 'lookup']);
    const results = fake.seen.models[2]!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results.map((r) => (JSON.parse(r) as { error: string }).error)).to.deep.equal([
      'no such table',
      'database is restarting',
    ]);
  });

  it('gives up on a callback the service refuses at once, and says so to the client', async () => {
    const fake = fakeActivities(env);
    fake.answers.callback = () =>
      Promise.reject(ApplicationFailure.retryable('private address', FAILURES.callbackRefused));
    const result = await withWorker(fake, (q) => runTurn(q, turnInput({ callbackUrl: 'http://10.0.0.1/' })));
    expect(result.status).to.equal('complete');
    expect(fake.seen.callbacks).to.equal(1);
    expect(fake.seen.events.find((e) => e.type === 'callback_failed')).to.include({
      error: 'private address',
    });
  });

  describe('invitation mail', () => {
    const invitation = (): InvitationInput => ({
      organizationId: ORG,
      organizationName: 'Org',
      userId: `usr_${randomUUID()}`,
      email: 'new@example.test',
      name: 'New',
      role: 'chat',
      invitedByName: 'Owner',
    });
    const sendInvitation = (taskQueue: string, input = invitation()) =>
      env.client.workflow.execute<(i: InvitationInput) => Promise<{ messageId: string }>>(
        WORKFLOWS.invitation,
        { taskQueue, workflowId: `invite-${ORG}-${input.userId}`, args: [input] },
      );
    const failureOf = (run: Promise<unknown>) =>
      run.then(
        () => expect.fail('the invitation workflow succeeded'),
        (err: { cause?: { cause?: Error } }) => err.cause?.cause?.message,
      );

    it('retries a relay that keeps failing 20 times in all, then fails', async () => {
      const fake = fakeActivities(env);
      fake.answers.invitation = () => Promise.reject(new Error('421 try again later'));
      const reason = await withWorker(fake, (q) => failureOf(sendInvitation(q)));
      expect(reason).to.equal('421 try again later');
      expect(fake.seen.invitations).to.equal(20);
    });

    it('stops at once when the relay rejects the message for good', async () => {
      const fake = fakeActivities(env);
      fake.answers.invitation = () =>
        Promise.reject(ApplicationFailure.retryable('550 no such mailbox', FAILURES.permanentMail));
      const reason = await withWorker(fake, (q) => failureOf(sendInvitation(q)));
      expect(reason).to.equal('550 no such mailbox');
      expect(fake.seen.invitations).to.equal(1);
    });

    it('returns the message id of the mail sent', async () => {
      const fake = fakeActivities(env);
      expect(await withWorker(fake, (q) => sendInvitation(q))).to.deep.equal({ messageId: '<m1@test>' });
      expect(fake.seen.invitations).to.equal(1);
    });
  });
});
