import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  frontendToolResultSignal,
  WORKFLOWS,
  type ModelTool,
  type TurnResult,
  type TurnSetup,
} from '@contracts';
import { MAX_AGENT_DEPTH, MAX_TOOL_ROUNDS } from '@workflows/agent-loop';
import { FRONTEND_TOOL_TIMEOUT, INPUT_SETUP_FRESH_MS } from '@workflows/turn';
import { useTimeSkippingSuite } from '@test/operations/workflow-suite';
import { ORG, target, setupWith, callTo, fakeActivities } from '@test/operations/workflow-fakes';

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
// The workflows alone, on Temporal's time-skipping test server, with every activity replaced: the loop's bounds
// and timers are checked exactly, and a five-minute wait takes no real time.
describe('workflows on the time-skipping test server', () => {
  const { suite, withWorker, turnInput, runTurn } = useTimeSkippingSuite();
  let env: TestWorkflowEnvironment;
  before(() => {
    ({ env } = suite);
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
});
