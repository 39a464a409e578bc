import { expect } from 'chai';
import { workflowIds } from '@contracts';
import { createTestAgent } from '@test/helpers/agents';
import { recordHistory } from '@test/helpers/histories';
import type { TestEnv } from '@test/helpers/env';
import { as, type TestOrg } from '@test/helpers/org';
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

  const { post, messagesOf, localActivitiesOf } = chatOf(suite);

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
});
