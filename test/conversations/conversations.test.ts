import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WORKFLOWS, workflowIds } from '@contracts';
import request from 'supertest';
import { createApp } from '@api/app';
import { createServices } from '@lib/services';
import { createTestAgent } from '@test/helpers/agents';
import { recordHistory } from '@test/helpers/histories';
import type { TestEnv } from '@test/helpers/env';
import { addMember, as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { stored } from '@test/helpers/store';
import { connectClient, connectError } from '@test/helpers/realtime';
import { eventually } from '@test/helpers/wait';
import { useWorkerAndOrg } from '@test/helpers/worker';

describe('conversations and turns', () => {
  const suite = useWorkerAndOrg('Chat Org');
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  const post = (body: object, token = org.owner.token) =>
    as(env, token).post(org.path('/conversations'), body);
  const messagesOf = async (conversationId: string) =>
    (
      await as(env, org.owner.token)
        .get(org.path(`/conversations/${conversationId}?messagesLimit=500`))
        .expect(200)
    ).body.messages as Array<{
      role: string;
      status: string;
      content: Array<{ text: string }>;
    }>;
  const replyOf = async (conversationId: string) =>
    eventually(async () => (await messagesOf(conversationId)).find((m) => m.role === 'assistant'), 60_000);
  /** The local activities a finished turn ran, in order, from its history. */
  const localActivitiesOf = async (workflowId: string) => {
    const handle = env.deps.temporal.client.workflow.getHandle(workflowId);
    await handle.result();
    const { events } = await handle.fetchHistory();
    return (events ?? []).flatMap((e) => {
      const marker = e.markerRecordedEventAttributes;
      if (marker?.markerName !== 'core_local_activity') return [];
      const data = marker.details!.data!.payloads![0]!.data!;
      return [(JSON.parse(Buffer.from(data).toString()) as { activity_type: string }).activity_type];
    });
  };

  it('creates a conversation without a message, titling it, and returns at once', async () => {
    const { agentId } = await createTestAgent(env, org.organizationId);
    const res = await post({ agentId }).expect(201);
    expect(res.body).to.include({
      organizationId: org.organizationId,
      agentId,
      title: 'New conversation',
      creatorUserId: org.owner.userId,
    });
    expect(res.body.requestId).to.match(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(await messagesOf(res.body.conversationId)).to.deep.equal([]);
  });

  it('streams the reply over socket.io in order and stores exactly the concatenated text', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId, { instructions: 'Be brief.' });
    const chunks = ['Hel', 'lo ', 'there', ', ', 'Olive', '!'];
    env.llm.on({ model }, { content: chunks.join(''), chunks });
    const client = await connectClient(env, org.organizationId, org.owner.token);
    try {
      const res = await post({ agentId, message: 'Say hello to me please, I am Olive' }).expect(201);
      expect(res.body.title).to.equal('Say hello to me please, I am Olive');
      const { requestId, conversationId } = res.body;
      const final = await client.waitFor(
        (e) => e.payload.requestId === requestId && e.payload.type === 'message',
        60_000,
      );
      const deltas = client.turn(requestId).filter((e) => e.payload.type === 'delta');
      expect(deltas.map((d) => d.payload.seq)).to.deep.equal(chunks.map((_, i) => i));
      expect(deltas.map((d) => d.payload.text).join('')).to.equal(chunks.join(''));
      expect(
        deltas.every((d) => d.event === 'conversation' && d.payload.conversationId === conversationId),
      ).to.equal(true);
      const message = (final.payload as { message: { content: Array<{ text: string }> } }).message;
      expect(message.content[0]!.text).to.equal('Hello there, Olive!');
      const stored = await messagesOf(conversationId);
      expect(stored.map((m) => [m.role, m.content[0]!.text])).to.deep.equal([
        ['user', 'Say hello to me please, I am Olive'],
        ['assistant', 'Hello there, Olive!'],
      ]);
      const sent = env.llm.chatRequests.find((r) => r.model === model)!;
      expect(sent.temperature).to.equal(0.7);
      expect(sent.stream).to.equal(true);
      expect(sent.messages[0]).to.deep.equal({ role: 'system', content: 'Be brief.' });
      expect(sent.messages[1]).to.deep.equal({ role: 'user', content: 'Say hello to me please, I am Olive' });
    } finally {
      client.close();
    }
  });

  it('ends a turn whose model answers nothing with an empty reply, stored (not retried for ever)', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId, { instructions: 'Be brief.' });
    env.llm.on({ model }, { content: '' });
    const client = await connectClient(env, org.organizationId, org.owner.token);
    try {
      const res = await post({ agentId, message: 'Say nothing' }).expect(201);
      const { requestId, conversationId } = res.body;
      const final = await client.waitFor(
        (e) =>
          e.payload.requestId === requestId && (e.payload.type === 'message' || e.payload.type === 'error'),
        60_000,
      );
      expect(final.payload.type).to.equal('message');
      const stored = await messagesOf(conversationId);
      expect(stored.map((m) => [m.role, m.status, m.content[0]!.text])).to.deep.equal([
        ['user', 'complete', 'Say nothing'],
        ['assistant', 'complete', ''],
      ]);
    } finally {
      client.close();
    }
  });

  it('sends a reasoning model its reasoning effort and no temperature', async () => {
    const agentId = `agt_reasoning${Date.now()}`;
    const model = `o3-test-${Date.now()}`;
    await env.deps.repos.tenant(org.organizationId).agents.create(agentId, {
      name: 'Thinker',
      nameSort: 'thinker',
      instructions: 'Think.',
      model,
      creativityScore: '0.9',
      reasoning: 'high',
    });
    env.llm.on({ model }, { content: 'Thought about it.' });
    const res = await post({ agentId, message: 'think' }).expect(201);
    await replyOf(res.body.conversationId);
    const sent = env.llm.chatRequests.find((r) => r.model === model)!;
    expect(sent.reasoning_effort).to.equal('high');
    expect(sent).to.not.have.property('temperature');
  });

  it('delivers a turn to every socket of its creator and to authorised subscribers, until they unsubscribe', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { content: 'For everyone.', chunks: ['For ', 'everyone.'] });
    const [mine, mySecond, watcher] = await Promise.all([
      connectClient(env, org.organizationId, org.owner.token),
      connectClient(env, org.organizationId, org.owner.token, 'auth'),
      connectClient(env, org.organizationId, org.admin.token),
    ]);
    try {
      const { conversationId } = (await post({ agentId, title: 'Shared' }).expect(201)).body;
      expect(await watcher.emit('subscribe', { conversationId })).to.deep.equal({ ok: true });
      const first = await post({ agentId, conversationId, message: 'one' }).expect(201);
      const done = (c: typeof mine, requestId: string) =>
        c.waitFor((e) => e.payload.requestId === requestId && e.payload.type === 'message');
      for (const client of [mine, mySecond, watcher]) {
        await done(client, first.body.requestId);
        const deltas = client.turn(first.body.requestId).filter((e) => e.payload.type === 'delta');
        expect(deltas.map((d) => d.payload.text).join('')).to.equal('For everyone.');
      }
      expect(await watcher.emit('unsubscribe', { conversationId })).to.deep.equal({ ok: true });
      const second = await post({ agentId, conversationId, message: 'two' }).expect(201);
      await done(mine, second.body.requestId);
      await done(mySecond, second.body.requestId);
      expect(watcher.turn(second.body.requestId)).to.deep.equal([]);
    } finally {
      for (const client of [mine, mySecond, watcher]) client.close();
    }
  });

  it('never answers the same requestId twice', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { content: 'Once.' });
    const first = await post({ agentId, message: 'hi', requestId: 'req-idem-1' }).expect(201);
    const { conversationId } = first.body;
    await replyOf(conversationId);
    const handle = env.deps.temporal.client.workflow.getHandle(
      workflowIds.turn(org.organizationId, conversationId, 'req-idem-1'),
    );
    const { runId } = await handle.describe();
    await post({ agentId, conversationId, message: 'hi', requestId: 'req-idem-1' }).expect(201);
    expect((await handle.describe()).runId).to.equal(runId);
    const stored = await messagesOf(conversationId);
    expect(stored.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
    expect(env.llm.chatRequests.filter((r) => r.model === model)).to.have.length(1);
  });

  it('answers two members who happen to send the same requestId, each in their own conversation', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, (body) => ({ content: `Echo: ${body.messages.at(-1)?.content as string}` }));
    const other = await addMember(env, org.organizationId, 'owner', 'Otto');
    const mine = await post({ agentId, message: 'from Olive', requestId: 'shared-req' }).expect(201);
    const theirs = await post({ agentId, message: 'from Otto', requestId: 'shared-req' }, other.token).expect(
      201,
    );
    expect(theirs.body.conversationId).to.not.equal(mine.body.conversationId);
    expect((await replyOf(mine.body.conversationId)).content[0]!.text).to.equal('Echo: from Olive');
    const reply = await eventually(async () =>
      (
        (
          await as(env, other.token)
            .get(org.path(`/conversations/${theirs.body.conversationId}`))
            .expect(200)
        ).body.messages as Array<{ role: string; content: Array<{ text: string }> }>
      ).find((m) => m.role === 'assistant'),
    );
    expect(reply.content[0]!.text).to.equal('Echo: from Otto');
  });

  it("refuses a turn beyond the organization's running-turn limit with 429 and Retry-After", async () => {
    const admission = { ...env.config.admission, limits: { ...env.config.admission.limits, turns: 1 } };
    const services = createServices({ ...env.deps, config: { ...env.config, admission } });
    const app = createApp({ ...env.deps, services });
    const send = (body: object) =>
      request(app)
        .post(org.path('/conversations'))
        .set('Authorization', `Bearer ${org.owner.token}`)
        .send(body);
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    env.llm.on({ model }, async () => {
      await held;
      return { content: 'Finally.' };
    });
    const first = await send({ agentId, message: 'one' }).expect(201);
    await eventually(() => Promise.resolve(env.llm.chatRequests.some((r) => r.model === model)));
    const refused = await send({ agentId, message: 'two', requestId: 'over-the-limit' }).expect(429);
    expect(refused.body.error.code).to.equal('too_many_turns');
    expect(refused.headers['retry-after']).to.equal('5');
    // Nothing of the refused turn was written.
    expect(
      (await as(env, org.owner.token).get(org.path('/conversations')).expect(200)).body.totalRows,
    ).to.equal(1);
    // Another organization is not limited by this one's turns.
    const other = await createTestOrg(env, 'Unlimited Org');
    const theirs = await createTestAgent(env, other.organizationId);
    env.llm.on({ model: theirs.model }, { content: 'Hi.' });
    await request(app)
      .post(other.path('/conversations'))
      .set('Authorization', `Bearer ${other.owner.token}`)
      .send({ agentId: theirs.agentId, message: 'hello' })
      .expect(201);
    release();
    await replyOf(first.body.conversationId);
    await eventually(
      async () => (await send({ agentId, message: 'two', requestId: 'over-the-limit' })).status === 201,
    );
  });

  it('answers a retried first message in the same conversation, once', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { content: 'Only once.' });
    const first = await post({ agentId, message: 'hello', requestId: 'req-retry-1' }).expect(201);
    const retry = await post({ agentId, message: 'hello', requestId: 'req-retry-1' }).expect(201);
    expect(retry.body.conversationId).to.equal(first.body.conversationId);
    await replyOf(first.body.conversationId);
    expect((await messagesOf(first.body.conversationId)).map((m) => m.role)).to.deep.equal([
      'user',
      'assistant',
    ]);
    const list = await as(env, org.owner.token)
      .get(org.path(`/conversations?agentId=${agentId}`))
      .expect(200);
    expect(list.body.totalRows).to.equal(1);
    const other = await createTestAgent(env, org.organizationId);
    await post({ agentId: other.agentId, message: 'hello', requestId: 'req-retry-1' }).expect(409);
  });

  it('continues a conversation with its history and a pre-filled assistant message', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { content: 'First answer' }, 1);
    const first = await post({
      agentId,
      assistantMessage: 'How can I help?',
      message: 'Question one',
    }).expect(201);
    await eventually(async () => (await messagesOf(first.body.conversationId)).length === 3);
    env.llm.on({ model }, { content: 'Second answer' }, 1);
    const next = await post({
      agentId,
      conversationId: first.body.conversationId,
      message: 'Question two',
    }).expect(201);
    await eventually(async () => (await messagesOf(first.body.conversationId)).length === 5);
    const [opening, second] = env.llm.chatRequests.filter((r) => r.model === model);
    // The turn that opened the conversation started from the setup the API handed over; the model saw what
    // loadTurn would have read.
    expect(opening!.messages).to.deep.equal([
      { role: 'system', content: 'You are helpful.' },
      { role: 'assistant', content: 'How can I help?' },
      { role: 'user', content: 'Question one' },
    ]);
    expect(second!.messages.slice(1)).to.deep.equal([
      { role: 'assistant', content: 'How can I help?' },
      { role: 'user', content: 'Question one' },
      { role: 'assistant', content: 'First answer' },
      { role: 'user', content: 'Question two' },
    ]);
    const turnId = (body: { conversationId: string; requestId: string }) =>
      workflowIds.turn(org.organizationId, body.conversationId, body.requestId);
    expect(await localActivitiesOf(turnId(first.body))).to.deep.equal(['saveReply']);
    expect(await localActivitiesOf(turnId(next.body))).to.deep.equal(['loadTurn', 'saveReply']);
    await recordHistory(env, turnId(first.body), 'turn-setup-from-input');
  });

  it('lets the turn read its setup when it is too big to hand over, or the request repeats one cut short', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { content: 'Read it.' });
    const turnId = (body: { conversationId: string; requestId: string }) =>
      workflowIds.turn(org.organizationId, body.conversationId, body.requestId);
    // Over MAX_INPUT_SETUP_BYTES (64 KB): the workflow input stays small, loadTurn reads the message.
    const long = 'x'.repeat(70_000);
    const big = await post({ agentId, message: long }).expect(201);
    expect(await localActivitiesOf(turnId(big.body))).to.deep.equal(['loadTurn', 'saveReply']);
    const [bigCall] = env.llm.chatRequests.filter((r) => r.model === model);
    expect(bigCall!.messages.at(-1)).to.deep.equal({ role: 'user', content: long });
    // An earlier attempt of this request opened the conversation and something was written to it since: the
    // repeat does not know the conversation's history, so the turn reads it.
    const repo = env.deps.repos.tenant(org.organizationId).conversations;
    const earlier = await repo.createForRequest('repeated-request', {
      agentId,
      title: 'Cut short',
      creatorUserId: org.owner.userId,
      isBrowserTask: false,
    });
    await repo.putMessage({
      conversationId: earlier._id,
      requestId: 'meanwhile',
      role: 'user',
      status: 'complete',
      text: 'Written meanwhile',
    });
    const repeat = await post({ agentId, requestId: 'repeated-request', message: 'Question' }).expect(201);
    expect(repeat.body.conversationId).to.equal(earlier._id);
    expect(await localActivitiesOf(turnId(repeat.body))).to.deep.equal(['loadTurn', 'saveReply']);
    const repeatCall = env.llm.chatRequests.filter((r) => r.model === model)[1]!;
    expect(repeatCall.messages.slice(1)).to.deep.equal([
      { role: 'user', content: 'Written meanwhile' },
      { role: 'user', content: 'Question' },
    ]);
  });

  it('pages the messages of a conversation from the newest back, with a cursor to older pages', async () => {
    const { agentId } = await createTestAgent(env, org.organizationId);
    const { conversationId } = (await post({ agentId, title: 'Paged' }).expect(201)).body;
    const repo = env.deps.repos.tenant(org.organizationId).conversations;
    for (let i = 0; i < 7; i++) {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      await repo.putMessage({ conversationId, requestId: `p${i}`, role, status: 'complete', text: `m${i}` });
    }
    type Page = {
      messages: Array<{ content: Array<{ text: string }> }>;
      totalMessages: number;
      olderMessagesCursor: string | null;
    };
    const get = async (query: string): Promise<Page> =>
      (
        await as(env, org.owner.token)
          .get(org.path(`/conversations/${conversationId}?${query}`))
          .expect(200)
      ).body as Page;
    const texts = (body: Page) => body.messages.map((m) => m.content[0]!.text);
    const newest = await get('messagesLimit=3');
    expect(texts(newest)).to.deep.equal(['m4', 'm5', 'm6']);
    expect(newest.totalMessages).to.equal(7);
    const middle = await get(`messagesLimit=3&messagesBefore=${newest.olderMessagesCursor}`);
    expect(texts(middle)).to.deep.equal(['m1', 'm2', 'm3']);
    const oldest = await get(`messagesLimit=3&messagesBefore=${middle.olderMessagesCursor}`);
    expect(texts(oldest)).to.deep.equal(['m0']);
    expect(oldest.olderMessagesCursor).to.equal(null);
    const all = await get('');
    expect(texts(all)).to.deep.equal(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    expect(all.olderMessagesCursor).to.equal(null);
    await as(env, org.owner.token)
      .get(org.path(`/conversations/${conversationId}?messagesLimit=501`))
      .expect(400);
  });

  it('GET {org}/conversations/{id}: conversation with all messages, past 100 without paging parameters', async () => {
    const { agentId } = await createTestAgent(env, org.organizationId);
    const { conversationId } = (await post({ agentId, title: 'All of it' }).expect(201)).body;
    const repo = env.deps.repos.tenant(org.organizationId).conversations;
    const written = Array.from({ length: 130 }, (_, i) => `all${i}`);
    for (const [i, text] of written.entries()) {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      await repo.putMessage({ conversationId, requestId: `a${i}`, role, status: 'complete', text });
    }
    const res = await as(env, org.owner.token)
      .get(org.path(`/conversations/${conversationId}`))
      .expect(200);
    const texts = (res.body.messages as Array<{ content: Array<{ text: string }> }>).map(
      (m) => m.content[0]!.text,
    );
    expect(texts).to.deep.equal(written);
    expect(res.body.totalMessages).to.equal(130);
    expect(res.body.olderMessagesCursor).to.equal(null);
  });

  it('shows the model only the newest 100 messages of a long conversation, in order', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { content: 'Noted.' });
    const created = await post({ agentId, title: 'Long' }).expect(201);
    const repo = env.deps.repos.tenant(org.organizationId).conversations;
    for (let i = 0; i < 105; i++) {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      await repo.putMessage({
        conversationId: created.body.conversationId,
        requestId: `h${i}`,
        role,
        status: 'complete',
        text: `m${i}`,
      });
    }
    await post({ agentId, conversationId: created.body.conversationId, message: 'latest' }).expect(201);
    await eventually(async () => (await messagesOf(created.body.conversationId)).length === 107);
    const sent = env.llm.chatRequests.find((r) => r.model === model)!;
    expect(sent.messages).to.have.length(101);
    expect(sent.messages.slice(1, 3).map((m) => m.content)).to.deep.equal(['m6', 'm7']);
    expect(sent.messages.at(-1)).to.deep.equal({ role: 'user', content: 'latest' });
  });

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
    let failFirst = 0;
    before(async () => {
      received = [];
      server = createServer((req, res) => {
        let data = '';
        req.on('data', (c: Buffer) => (data += c.toString()));
        req.on('end', () => {
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
      await recordHistory(
        env,
        workflowIds.turn(org.organizationId, res.body.conversationId, res.body.requestId),
        'turn-callback',
      );
    });
  });

  it('retries a rate-limited model call and then answers', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { error: { status: 429, message: 'slow down' } }, 1);
    env.llm.on({ model }, { content: 'Made it.' });
    const res = await post({ agentId, message: 'hi' }).expect(201);
    const reply = await replyOf(res.body.conversationId);
    expect(reply).to.include({ status: 'complete' });
    expect(reply.content[0]!.text).to.equal('Made it.');
    expect(env.llm.chatRequests.filter((r) => r.model === model)).to.have.length(2);
  });

  it('stores and emits a clear error when the model rejects the request', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, { error: { status: 400, message: 'context length exceeded' } });
    const client = await connectClient(env, org.organizationId, org.owner.token);
    try {
      const res = await post({ agentId, message: 'hi' }).expect(201);
      const reply = await replyOf(res.body.conversationId);
      expect(reply.status).to.equal('error');
      expect(reply.content[0]!.text).to.contain('context length exceeded');
      const event = await client.waitFor(
        (e) => e.payload.requestId === res.body.requestId && e.payload.type === 'error',
      );
      expect(event.event).to.equal('conversation');
      expect(env.llm.chatRequests.filter((r) => r.model === model)).to.have.length(1);
    } finally {
      client.close();
    }
  });

  it('ends a turn whose agent or conversation is gone with an error, at once and without retrying', async () => {
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    const created = await post({ agentId, title: 'Orphans' }).expect(201);
    const conversationId = created.body.conversationId as string;
    await as(env, org.admin.token)
      .delete(org.path(`/agents/${agentId}`))
      .expect(200);
    const client = await connectClient(env, org.organizationId, org.owner.token);
    const run = (input: { conversationId: string; requestId: string }) =>
      env.deps.temporal.client.workflow.execute(WORKFLOWS.turn, {
        taskQueue: env.config.temporal.taskQueue,
        workflowId: workflowIds.turn(org.organizationId, input.conversationId, input.requestId),
        args: [{ organizationId: org.organizationId, agentId, userId: org.owner.userId, ...input }],
      });
    try {
      // The agent was deleted after the turn was accepted: the reply is a stored error message.
      const result = await run({ conversationId, requestId: 'gone-agent' });
      expect(result.status).to.equal('error');
      await recordHistory(
        env,
        workflowIds.turn(org.organizationId, conversationId, 'gone-agent'),
        'turn-agent-gone',
      );
      // (Read from the store: a conversation whose agent is gone is no longer served over HTTP.)
      const [reply] = await env.deps.repos.tenant(org.organizationId).conversations.messages(conversationId);
      expect(reply).to.include({ role: 'assistant', status: 'error', _id: result.messageId });
      expect(reply!.content[0]!.text).to.contain(`the agent ${agentId} no longer exists`);
      await client.waitFor((e) => e.payload.requestId === 'gone-agent' && e.payload.type === 'error');
      // The conversation was deleted too: nothing is stored, the client still hears of it.
      // (Removed in the store: HTTP no longer serves a conversation whose agent is gone.)
      expect(await env.deps.repos.tenant(org.organizationId).conversations.remove(conversationId)).to.equal(
        true,
      );
      const orphan = await run({ conversationId, requestId: 'gone-conversation' });
      expect(orphan).to.deep.equal({ messageId: null, status: 'error' });
      const event = await client.waitFor(
        (e) => e.payload.requestId === 'gone-conversation' && e.payload.type === 'error',
      );
      expect(event.payload.error).to.contain('no longer exists');
      expect(await stored(env, 'messages').countDocuments({ conversationId })).to.equal(0);
      expect(env.llm.chatRequests.filter((r) => r.model === model)).to.have.length(0);
    } finally {
      client.close();
    }
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

  it("keeps a member's conversations readable and deletable after their agent is deleted", async () => {
    const group = await as(env, org.owner.token)
      .post(org.path('/groups'), { name: 'Helpers', description: '', isDefault: false, fullAccess: false })
      .expect(201);
    const { agentId } = await createTestAgent(env, org.organizationId);
    await as(env, org.owner.token)
      .post(org.path(`/groups/${group.body.userGroupId}/agents`), { agentId })
      .expect(201);
    await as(env, org.owner.token)
      .post(org.path(`/groups/${group.body.userGroupId}/users`), { userId: org.chat.userId })
      .expect(200);
    const { conversationId } = (await post({ agentId, title: 'Mine' }, org.chat.token).expect(201)).body;
    // While the agent exists, losing access to it hides the conversation.
    await as(env, org.owner.token)
      .delete(org.path(`/groups/${group.body.userGroupId}/agents/${agentId}`))
      .expect(200);
    await as(env, org.chat.token)
      .get(org.path(`/conversations/${conversationId}`))
      .expect(404);
    // Once the agent is gone there is nothing to hide: the creator reads and deletes it; others still cannot.
    await as(env, org.admin.token)
      .delete(org.path(`/agents/${agentId}`))
      .expect(200);
    await as(env, org.chat.token)
      .get(org.path(`/conversations/${conversationId}`))
      .expect(200);
    const stranger = await addMember(env, org.organizationId, 'chat', 'Stranger');
    await as(env, stranger.token)
      .get(org.path(`/conversations/${conversationId}`))
      .expect(404);
    await as(env, org.chat.token)
      .delete(org.path(`/conversations/${conversationId}`))
      .expect(200);
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

  describe('access', () => {
    it('hides agents and conversations a member may not access, on HTTP and on the socket', async () => {
      const { agentId, model } = await createTestAgent(env, org.organizationId);
      env.llm.on({ model }, { content: 'Private reply' });
      // The chat member has no group and there is no default group: no agent access.
      await post({ agentId, message: 'hi' }, org.chat.token).expect(invalidReference('agentId'));
      const watcher = await connectClient(env, org.organizationId, org.chat.token);
      try {
        const res = await post({ agentId, message: 'secret' }).expect(201);
        await replyOf(res.body.conversationId);
        expect(
          watcher.events.filter((e) => e.payload.conversationId === res.body.conversationId),
        ).to.deep.equal([]);
        const sub = await watcher.emit('subscribe', { conversationId: res.body.conversationId });
        expect(sub).to.deep.include({ ok: false });
        await as(env, org.chat.token)
          .get(org.path(`/conversations/${res.body.conversationId}`))
          .expect(404);
        // Admins and owners read every conversation (as they read every agent), and list it with all=true.
        await as(env, org.admin.token)
          .get(org.path(`/conversations/${res.body.conversationId}`))
          .expect(200);
        const all = await as(env, org.admin.token).get(org.path('/conversations?all=true')).expect(200);
        expect(all.body.items.map((c: { conversationId: string }) => c.conversationId)).to.include(
          res.body.conversationId,
        );
      } finally {
        watcher.close();
      }
    });

    it('lets an assume-role token chat over socket.io once its group grants the agent', async () => {
      const { agentId, model } = await createTestAgent(env, org.organizationId);
      env.llm.on({ model }, { content: 'Hi embedded user' });
      const group = await as(env, org.owner.token)
        .post(org.path('/groups'), { name: 'Everyone', description: '', isDefault: true, fullAccess: true })
        .expect(201);
      expect(group.body.isDefault).to.equal(true);
      const minted = await as(env, org.apiKey)
        .post(org.path('/assume-role'), { userId: 'crm-7', userEmail: `crm7-${Date.now()}@example.test` })
        .expect(200);
      const client = await connectClient(env, org.organizationId, minted.body.token, 'auth');
      try {
        const res = await post({ agentId, message: 'hello' }, minted.body.token).expect(201);
        const final = await client.waitFor(
          (e) => e.payload.requestId === res.body.requestId && e.payload.type === 'message',
          60_000,
        );
        expect(
          (final.payload as { message: { content: Array<{ text: string }> } }).message.content[0]!.text,
        ).to.equal('Hi embedded user');
      } finally {
        client.close();
      }
    });

    it('refuses sockets without valid credentials for the organization', async () => {
      const other = await createTestOrg(env, 'Other Chat Org');
      expect(await connectError(env, {})).to.be.a('string');
      expect(
        await connectError(env, { auth: { token: 'garbage', organizationId: org.organizationId } }),
      ).to.contain('token');
      expect(
        await connectError(env, { auth: { token: other.owner.token, organizationId: org.organizationId } }),
      ).to.contain('organization');
    });

    it('keeps conversations inside their organization', async () => {
      const { agentId } = await createTestAgent(env, org.organizationId);
      const other = await createTestOrg(env, 'Other Chat Org');
      const res = await post({ agentId }).expect(201);
      await as(env, other.owner.token)
        .get(other.path(`/conversations/${res.body.conversationId}`))
        .expect(404);
      await as(env, other.owner.token)
        .get(org.path(`/conversations/${res.body.conversationId}`))
        .expect(401);
      await as(env, other.owner.token)
        .post(other.path('/conversations'), { agentId })
        .expect(invalidReference('agentId'));
      const list = await as(env, other.owner.token).get(other.path('/conversations?all=true')).expect(200);
      expect(list.body.totalRows).to.equal(0);
    });
  });

  it('lists, renames and deletes conversations; all=true is for admins and owners', async () => {
    const { agentId } = await createTestAgent(env, org.organizationId);
    const a = (await post({ agentId, title: 'Alpha' }).expect(201)).body;
    const b = (await post({ agentId, title: 'Beta' }).expect(201)).body;
    const mine = await as(env, org.owner.token).get(org.path('/conversations?orderBy=title')).expect(200);
    expect(mine.body.items.map((c: { title: string }) => c.title)).to.deep.equal(['Alpha', 'Beta']);
    const q = await as(env, org.owner.token).get(org.path('/conversations?q=bet')).expect(200);
    expect(q.body.items.map((c: { conversationId: string }) => c.conversationId)).to.deep.equal([
      b.conversationId,
    ]);
    const adminOwn = await as(env, org.admin.token).get(org.path('/conversations')).expect(200);
    expect(adminOwn.body.totalRows).to.equal(0);
    await as(env, org.chat.token).get(org.path('/conversations?all=true')).expect(403);
    const renamed = await as(env, org.owner.token)
      .put(org.path(`/conversations/${a.conversationId}`), { title: 'Alpha 2' })
      .expect(200);
    expect(renamed.body.title).to.equal('Alpha 2');
    const deleted = await as(env, org.owner.token)
      .delete(org.path(`/conversations/${a.conversationId}`))
      .expect(200);
    expect(deleted.body).to.deep.equal({
      organizationId: org.organizationId,
      conversationId: a.conversationId,
    });
    await as(env, org.owner.token)
      .get(org.path(`/conversations/${a.conversationId}`))
      .expect(404);
    expect(await stored(env, 'messages').countDocuments({ conversationId: a.conversationId })).to.equal(0);
  });
});
