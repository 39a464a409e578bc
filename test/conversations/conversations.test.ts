import { expect } from 'chai';
import { WORKFLOWS, workflowIds } from '@contracts';
import request from 'supertest';
import { createApp } from '@api/app';
import { createServices } from '@lib/services';
import { createTestAgent } from '@test/helpers/agents';
import { recordHistory } from '@test/helpers/histories';
import type { TestEnv } from '@test/helpers/env';
import { addMember, as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { stored } from '@test/helpers/store';
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

  const { post, messagesOf, replyOf } = chatOf(suite);

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
});
