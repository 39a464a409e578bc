import { expect } from 'chai';
import { io, type Socket } from 'socket.io-client';
import { TokenService } from '@lib/auth/tokens';
import { createTestAgent } from '@test/helpers/agents';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { addMember, as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';

/** A socket presenting only `Authorization`, as the spec describes WebSocket clients. */
async function connect(env: TestEnv, token: string, organizationId?: string) {
  const { url } = await env.listen();
  const socket: Socket = io(url, {
    transports: ['websocket'],
    reconnection: false,
    extraHeaders: {
      Authorization: `Bearer ${token}`,
      ...(organizationId ? { 'x-organization-id': organizationId } : {}),
    },
  });
  let disconnected = false;
  socket.on('disconnect', () => (disconnected = true));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('connect_error', reject);
  });
  return {
    socket,
    emit: (event: string, payload: unknown) =>
      new Promise<{ ok: boolean; error?: { code: string } }>((resolve) =>
        socket.emit(event, payload, resolve),
      ),
    /** resolves once the server has disconnected the socket */
    disconnected: () => eventually(() => disconnected || undefined, 10_000),
    isConnected: () => !disconnected,
  };
}

describe('socket.io authorisation over the life of a connection', () => {
  let env: TestEnv;
  let org: TestOrg;
  let conversationId: string;
  before(async () => {
    env = await testEnv();
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Socket Org');
    const { agentId } = await createTestAgent(env, org.organizationId);
    conversationId = (
      await as(env, org.owner.token).post(org.path('/conversations'), { agentId }).expect(201)
    ).body.conversationId as string;
  });

  it('accepts a connection that presents only its token or key: the credential names the organization', async () => {
    for (const credential of [org.owner.token, org.apiKey]) {
      const client = await connect(env, credential);
      expect(await client.emit('subscribe', { conversationId })).to.deep.equal({ ok: true });
      client.socket.disconnect();
    }
  });

  it('disconnects sockets of a revoked API key, and of a member removed or whose role changed', async () => {
    const created = await as(env, org.owner.token)
      .post(org.path('/api-keys'), { description: 'socket' })
      .expect(201);
    const keyClient = await connect(env, created.body.key as string);
    const bystander = await connect(env, org.owner.token);
    await as(env, org.owner.token)
      .delete(org.path(`/api-keys/${created.body.apiKeyId}`))
      .expect(200);
    await keyClient.disconnected();

    const admin = await connect(env, org.admin.token);
    await as(env, org.owner.token)
      .put(org.path(`/users/${org.admin.userId}`), { role: 'chat' })
      .expect(200);
    await admin.disconnected();
    const chat = await connect(env, org.chat.token);
    await as(env, org.owner.token)
      .delete(org.path(`/users/${org.chat.userId}`))
      .expect(200);
    await chat.disconnected();
    // Positive control: nobody else was disconnected, and the removed member cannot come back.
    expect(bystander.isConnected()).to.equal(true);
    await connect(env, org.chat.token).then(
      () => expect.fail('a removed member connected'),
      (err: Error) => expect(err.message).to.contain('not a member'),
    );
    bystander.socket.disconnect();
  });

  it('authorises every client event again: a member removed behind its back is refused and disconnected', async () => {
    const member = await addMember(env, org.organizationId, 'owner', 'Ada');
    const client = await connect(env, member.token);
    expect(await client.emit('subscribe', { conversationId })).to.deep.equal({ ok: true });
    // Removed in the store (no revocation message): the next event finds out.
    await env.deps.repos.tenant(org.organizationId).members.remove(member.userId);
    const refused = await client.emit('subscribe', { conversationId });
    expect(refused).to.deep.include({ ok: false });
    expect(refused.error?.code).to.equal('unauthorized');
    await client.disconnected();
  });

  it('disconnects a socket when its token expires', async () => {
    const shortLived = new TokenService(env.config.auth.jwtSecret, env.config.auth.issuer, 2);
    const { token } = await shortLived.signSession(org.organizationId, org.owner.userId);
    const client = await connect(env, token);
    expect(client.isConnected()).to.equal(true);
    await client.disconnected();
  });
});
