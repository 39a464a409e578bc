import { expect } from 'chai';
import { createTestAgent } from '@test/helpers/agents';
import type { TestEnv } from '@test/helpers/env';
import { addMember, as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { stored } from '@test/helpers/store';
import { connectClient, connectError } from '@test/helpers/realtime';
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
