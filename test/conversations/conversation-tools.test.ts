import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { workflowIds } from '@contracts';
import { createTestAgent } from '@test/helpers/agents';
import { recordHistory } from '@test/helpers/histories';
import type { TestEnv } from '@test/helpers/env';
import { as, type TestOrg } from '@test/helpers/org';
import { connectClient } from '@test/helpers/realtime';
import { eventually } from '@test/helpers/wait';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { chatOf } from '@test/conversations/chat';

describe('conversations and turns', () => {
  const suite = useWorkerAndOrg('Chat Org');
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  const { post, replyOf } = chatOf(suite);

  it('runs server tool calls as activities and loops until the final answer', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${agentId}/tools`), {
        toolCode: 'current_time',
        configuration: { timeZone: 'Australia/Sydney' },
      })
      .expect(201);
    env.llm.on({ model }, { toolCalls: [{ id: 'call_t1', name: 'current_time', arguments: {} }] }, 1);
    env.llm.on({ model }, (body) => {
      const tool = body.messages.find((m) => m.role === 'tool') as { content: string } | undefined;
      return { content: `It is ${JSON.parse(tool!.content).timeZone} time.` };
    });
    const client = await connectClient(env, org.organizationId, org.owner.token);
    try {
      const res = await post({ agentId, message: 'What time is it?' }).expect(201);
      const reply = await replyOf(res.body.conversationId);
      expect(reply.content[0]!.text).to.equal('It is Australia/Sydney time.');
      const sent = env.llm.chatRequests.filter((r) => r.model === model);
      expect(sent).to.have.length(2);
      expect(sent[0]!.tools!.map((t) => (t as { function: { name: string } }).function.name)).to.deep.equal([
        'current_time',
      ]);
      const turn = await eventually(() => {
        const events = client.turn(res.body.requestId);
        return events.some((e) => e.payload.type === 'message') && events;
      });
      expect(turn.filter((e) => e.event === 'tool-update').map((e) => e.payload.status)).to.deep.equal([
        'running',
        'completed',
      ]);
      expect(turn.find((e) => e.payload.type === 'tool_call')!.payload).to.include({
        name: 'current_time',
        executor: 'server',
      });
      await recordHistory(
        env,
        workflowIds.turn(org.organizationId, res.body.conversationId, res.body.requestId),
        'turn-server-tool',
      );
    } finally {
      client.close();
    }
  });

  it('sends a frontend tool call to the client and continues with its result', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on(
      { model },
      { toolCalls: [{ id: 'call_f1', name: 'get_location', arguments: { precise: true } }] },
      1,
    );
    env.llm.on({ model }, (body) => {
      const tool = body.messages.find((m) => m.role === 'tool') as { content: string };
      return { content: `You are in ${JSON.parse(tool.content).city}.` };
    });
    const client = await connectClient(env, org.organizationId, org.owner.token, 'auth');
    try {
      const res = await post({
        agentId,
        message: 'Where am I?',
        frontendTools: [
          {
            name: 'get_location',
            description: 'Location of the user',
            parameters: { type: 'object', properties: { precise: { type: 'boolean' } } },
          },
        ],
      }).expect(201);
      const call = await client.waitFor(
        (e) => e.payload.requestId === res.body.requestId && e.payload.type === 'tool_call',
        60_000,
      );
      expect(call.payload).to.include({
        executor: 'frontend',
        name: 'get_location',
        toolCallId: 'call_f1',
        arguments: '{"precise":true}',
      });
      const ack = await client.emit('frontend-tool-result', {
        conversationId: res.body.conversationId,
        requestId: res.body.requestId,
        toolCallId: 'call_f1',
        result: { city: 'Hobart' },
      });
      expect(ack.ok).to.equal(true);
      const reply = await replyOf(res.body.conversationId);
      expect(reply.content[0]!.text).to.equal('You are in Hobart.');
      await recordHistory(
        env,
        workflowIds.turn(org.organizationId, res.body.conversationId, res.body.requestId),
        'turn-frontend-tool',
      );
      const bad = await client.emit('frontend-tool-result', {
        conversationId: res.body.conversationId,
        requestId: 'nope',
        toolCallId: 'x',
        result: 1,
      });
      expect(bad).to.deep.include({ ok: false });
    } finally {
      client.close();
    }
  });

  describe('with a callback receiver', () => {
    let server: Server;
    let received: Array<Record<string, unknown>>;
    /** The Idempotency-Key of every POST, refused ones included. */
    let keys: Array<string | undefined>;
    let failFirst = 0;
    before(async () => {
      received = [];
      keys = [];
      server = createServer((req, res) => {
        let data = '';
        req.on('data', (c: Buffer) => (data += c.toString()));
        req.on('end', () => {
          keys.push(req.headers['idempotency-key'] as string | undefined);
          if (failFirst > 0) {
            failFirst--;
            res.statusCode = 503;
            return res.end();
          }
          received.push(JSON.parse(data) as Record<string, unknown>);
          res.end('ok');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    after(() => server.close());

    it('refuses a requestId that would break out of the Idempotency-Key header', async () => {
      const { agentId } = await createTestAgent(env, org.organizationId);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const res = await post({
        agentId,
        message: 'go',
        callbackUrl: url,
        requestId: 'r1\r\nX-Injected: 1',
      }).expect(400);
      expect(res.body.error.code).to.equal('validation_failed');
    });

    it('POSTs the outcome to callbackUrl, retrying a failing receiver', async () => {
      const { agentId, model } = await createTestAgent(env, org.organizationId);
      env.llm.on({ model }, { content: 'Done.' });
      failFirst = 1;
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const res = await post({ agentId, message: 'go', callbackUrl: url }).expect(201);
      const body = await eventually(() => received.find((r) => r.requestId === res.body.requestId), 60_000);
      expect(body).to.include({
        organizationId: org.organizationId,
        conversationId: res.body.conversationId,
        agentId,
        status: 'complete',
      });
      expect((body.message as { content: Array<{ text: string }> }).content[0]!.text).to.equal('Done.');
      expect(received.filter((r) => r.requestId === res.body.requestId)).to.have.length(1);
      // the refused POST and its retry carry the same key, so a receiver can tell a repeat
      expect(keys).to.deep.equal([res.body.requestId, res.body.requestId]);
      await recordHistory(
        env,
        workflowIds.turn(org.organizationId, res.body.conversationId, res.body.requestId),
        'turn-callback',
      );
    });
  });

  it('stops a model that always calls tools after 8 rounds: the 9th call has no tools and must answer', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${agentId}/tools`), { toolCode: 'current_time', configuration: {} })
      .expect(201);
    let round = 0;
    env.llm.on({ model }, (body) =>
      body.tools?.length
        ? { toolCalls: [{ id: `call_r${++round}`, name: 'current_time', arguments: {} }] }
        : { content: 'Out of tool rounds.' },
    );
    const res = await post({ agentId, message: 'loop forever' }).expect(201);
    const reply = await replyOf(res.body.conversationId);
    expect(reply.content[0]!.text).to.equal('Out of tool rounds.');
    const calls = env.llm.chatRequests.filter((r) => r.model === model);
    expect(calls).to.have.length(9);
    expect(calls.slice(0, 8).every((c) => c.tools?.length === 1)).to.equal(true);
    expect(calls[8]!.tools ?? []).to.deep.equal([]);
  });

  it('lets agents call each other at most 3 levels deep (A → B → C → D, and D may not ask E)', async () => {
    const chain: Array<{ agentId: string; model: string }> = [];
    for (const name of ['A', 'B', 'C', 'D', 'E'])
      chain.push(await createTestAgent(env, org.organizationId, { name }));
    for (let i = 0; i < 4; i++) {
      const [from, to] = [chain[i]!, chain[i + 1]!];
      await as(env, org.admin.token)
        .post(org.path(`/agents/${from.agentId}/agent-attachments`), {
          targetAgentId: to.agentId,
          instructions: '',
        })
        .expect(201);
      await as(env, org.admin.token)
        .post(org.path(`/agents/${from.agentId}/tools`), { toolCode: 'call_agent', configuration: {} })
        .expect(201);
    }
    // Each agent asks the next one (when it may) and reports what came back.
    chain.forEach((agent, i) => {
      const next = chain[i + 1];
      env.llm.on({ model: agent.model }, (body) => {
        const toolResult = body.messages.find((m) => m.role === 'tool') as { content: string } | undefined;
        if (toolResult) return { content: `${agent.model} got: ${toolResult.content}` };
        const ask =
          next && body.tools?.find((t) => t.type === 'function' && t.function.name === `ask_${next.agentId}`);
        return ask
          ? {
              toolCalls: [{ id: `call_${i}`, name: `ask_${next.agentId}`, arguments: { message: 'go on' } }],
            }
          : { content: `${agent.model} answers` };
      });
    });
    const res = await post({ agentId: chain[0]!.agentId, message: 'start' }).expect(201);
    const reply = await replyOf(res.body.conversationId);
    expect(reply.content[0]!.text, reply.content[0]!.text).to.contain('at most 3 levels deep');
    const asked = (m: string) => env.llm.chatRequests.filter((r) => r.model === m).length;
    for (const agent of chain.slice(1, 4)) expect(asked(agent.model)).to.be.greaterThan(0);
    expect(asked(chain[4]!.model)).to.equal(0);
  });

  it('agents with attached other agents: the attachment alone, without call_agent, makes the agent callable', async () => {
    const asker = await createTestAgent(env, org.organizationId, { name: 'Plain asker' });
    const expert = await createTestAgent(env, org.organizationId, { name: 'Plain expert' });
    await as(env, org.admin.token)
      .post(org.path(`/agents/${asker.agentId}/agent-attachments`), {
        targetAgentId: expert.agentId,
        instructions: 'Ask about tides.',
      })
      .expect(201);
    const toolName = `ask_${expert.agentId}`;
    env.llm.on(
      { model: asker.model },
      (body) =>
        body.tools?.some((t) => t.type === 'function' && t.function.name === toolName)
          ? { toolCalls: [{ id: 'call_p1', name: toolName, arguments: { message: 'High tide?' } }] }
          : { content: 'no such tool' },
      1,
    );
    env.llm.on({ model: expert.model }, { content: 'At 3pm.' });
    env.llm.on({ model: asker.model }, (body) => ({
      content: `Expert says: ${(body.messages.at(-1) as { content: string }).content}`,
    }));
    const res = await post({ agentId: asker.agentId, message: 'Tides?' }).expect(201);
    const reply = await replyOf(res.body.conversationId);
    expect(reply.content[0]!.text).to.equal('Expert says: At 3pm.');
  });

  it('lets an agent ask an attached agent through a child workflow', async () => {
    const asker = await createTestAgent(env, org.organizationId, { name: 'Asker' });
    const expert = await createTestAgent(env, org.organizationId, {
      name: 'Expert',
      instructions: 'You know tides.',
    });
    await as(env, org.admin.token)
      .post(org.path(`/agents/${asker.agentId}/agent-attachments`), {
        targetAgentId: expert.agentId,
        instructions: 'Ask about tides.',
      })
      .expect(201);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${asker.agentId}/tools`), { toolCode: 'call_agent', configuration: {} })
      .expect(201);
    const toolName = `ask_${expert.agentId}`;
    env.llm.on(
      { model: asker.model },
      { toolCalls: [{ id: 'call_a1', name: toolName, arguments: { message: 'When is high tide?' } }] },
      1,
    );
    env.llm.on({ model: expert.model }, { content: 'High tide is at 3pm.' });
    env.llm.on({ model: asker.model }, (body) => ({
      content: `Expert says: ${(body.messages.at(-1) as { content: string }).content}`,
    }));
    const res = await post({ agentId: asker.agentId, message: 'Tides?' }).expect(201);
    const reply = await replyOf(res.body.conversationId);
    expect(reply.content[0]!.text).to.equal('Expert says: High tide is at 3pm.');
    const expertCall = env.llm.chatRequests.find((r) => r.model === expert.model)!;
    expect(expertCall.messages).to.deep.equal([
      { role: 'system', content: 'You know tides.' },
      { role: 'user', content: 'When is high tide?' },
    ]);
    const child = env.deps.temporal.client.workflow.getHandle(
      workflowIds.agentCall(
        workflowIds.turn(org.organizationId, res.body.conversationId, res.body.requestId),
        'call_a1',
      ),
    );
    expect((await child.describe()).status.name).to.equal('COMPLETED');
    await recordHistory(
      env,
      workflowIds.turn(org.organizationId, res.body.conversationId, res.body.requestId),
      'turn-agent-call',
    );
    await recordHistory(env, child.workflowId, 'agent-call');
  });
});
