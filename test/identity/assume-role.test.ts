import { expect } from 'chai';
import { SignJWT } from 'jose';
import request from 'supertest';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';

describe('assume-role tokens', () => {
  let env: TestEnv;
  let org: TestOrg;

  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Embed Org');
  });

  const verify = (token: string, orgPath = org.path()) =>
    request(env.app).post(`${orgPath}/assume-role/verify`).send({ token });

  it('mints a 2-hour chat token for an existing member that verify accepts without auth', async () => {
    const res = await as(env, org.owner.token)
      .post(org.path('/assume-role'), { userId: org.chat.userId, permissions: ['chat:agent-1'] })
      .expect(200);
    expect(res.body).to.include({
      userId: org.chat.userId,
      organizationId: org.organizationId,
      role: 'chat',
    });
    const claims = (await verify(res.body.token).expect(200)).body;
    expect(claims).to.deep.include({
      valid: true,
      userId: org.chat.userId,
      organizationId: org.organizationId,
      role: 'chat',
      permissions: ['chat:agent-1'],
      expiresAt: res.body.expiresAt,
    });
    expect(Date.parse(claims.expiresAt) - Date.parse(claims.issuedAt)).to.equal(2 * 3600 * 1000);
  });

  it('acts only for chat members: an admin or owner would share their live turns with the token', async () => {
    for (const userId of [org.admin.userId, org.owner.userId]) {
      const refused = await as(env, org.owner.token).post(org.path('/assume-role'), { userId }).expect(403);
      expect(refused.body.error.message).to.contain('chat members');
    }
  });

  it('grants only the chat role', async () => {
    const { token } = (
      await as(env, org.owner.token).post(org.path('/assume-role'), { userId: org.chat.userId }).expect(200)
    ).body;
    await as(env, token).get(org.path()).expect(200);
    await as(env, token)
      .get(org.path(`/users/${org.owner.userId}`))
      .expect(200);
    await as(env, token).get(org.path('/users')).expect(403);
    await as(env, token).post(org.path('/assume-role'), { userId: org.owner.userId }).expect(403);
  });

  it('stays a chat token when its member is promoted: it never carries the member’s own role', async () => {
    const { token } = (
      await as(env, org.owner.token).post(org.path('/assume-role'), { userId: org.chat.userId }).expect(200)
    ).body;
    await as(env, org.owner.token)
      .put(org.path(`/users/${org.chat.userId}`), { role: 'admin' })
      .expect(200);
    // The member's own session now lists users; the embedded-chat token minted for them still may not.
    await as(env, org.chat.token).get(org.path('/users')).expect(200);
    await as(env, token).get(org.path('/users')).expect(403);
    await as(env, token).post(org.path('/api-keys'), {}).expect(403);
    await as(env, token).get(org.path()).expect(200);
  });

  it('creates an unknown user as a chat member when userEmail is given, and finds them again by that id', async () => {
    const email = `pat-${Date.now()}@example.test`;
    const first = await as(env, org.apiKey)
      .post(org.path('/assume-role'), { userId: 'crm-contact-42', userEmail: email, userName: 'Pat' })
      .expect(200);
    const member = await as(env, org.owner.token)
      .get(org.path(`/users/${first.body.userId}`))
      .expect(200);
    expect(member.body).to.include({ role: 'chat', email, name: 'Pat', sourceId: 'crm-contact-42' });
    const again = await as(env, org.apiKey)
      .post(org.path('/assume-role'), { userId: 'crm-contact-42' })
      .expect(200);
    expect(again.body.userId).to.equal(first.body.userId);
    const users = await as(env, org.owner.token).get(org.path('/users')).expect(200);
    expect(users.body.totalRows).to.equal(4);
  });

  it('is 400 invalid_reference for an unknown user without userEmail, saying userEmail creates them', async () => {
    const res = await as(env, org.owner.token)
      .post(org.path('/assume-role'), { userId: 'nobody' })
      .expect(invalidReference('userId'));
    expect(res.body.error.message).to.contain('pass userEmail to create them');
  });

  it('requires assume_role.write on an API key', async () => {
    const noWrite = (
      await as(env, org.owner.token)
        .post(org.path('/api-keys'), { permissions: { assume_role: { read: true } } })
        .expect(201)
    ).body.key;
    const res = await as(env, noWrite)
      .post(org.path('/assume-role'), { userId: org.chat.userId })
      .expect(403);
    expect(res.body.error.message).to.contain('assume_role.write');
    const withWrite = (
      await as(env, org.owner.token)
        .post(org.path('/api-keys'), { permissions: { assume_role: { write: true } } })
        .expect(201)
    ).body.key;
    await as(env, withWrite).post(org.path('/assume-role'), { userId: org.chat.userId }).expect(200);
  });

  it('refuses chat members minting tokens', async () => {
    await as(env, org.chat.token).post(org.path('/assume-role'), { userId: org.chat.userId }).expect(403);
  });

  it('rejects forged, expired, session and other-organization tokens on verify', async () => {
    const other = await createTestOrg(env, 'Other Embed Org');
    const { token } = (
      await as(env, org.owner.token).post(org.path('/assume-role'), { userId: org.chat.userId }).expect(200)
    ).body;
    const elsewhere = await verify(token, other.path()).expect(401);
    expect(elsewhere.body.error.code).to.equal('invalid_token');
    await as(env, token).get(other.path()).expect(401);

    const [header, payload] = token.split('.');
    await verify(`${header}.${payload}.${'A'.repeat(43)}`).expect(401);

    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({
      typ: 'assume_role',
      org: org.organizationId,
      role: 'chat',
      permissions: [],
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(env.config.auth.issuer)
      .setAudience('agent-workspace-api')
      .setSubject(org.chat.userId)
      .setIssuedAt(now - 3 * 3600)
      .setExpirationTime(now - 3600)
      .sign(new TextEncoder().encode(env.config.auth.jwtSecret));
    const res = await verify(expired).expect(401);
    expect(res.body.error.message).to.contain('expired');
    await as(env, expired).get(org.path()).expect(401);

    await verify(org.owner.token).expect(401);
    await verify('').expect(400);
  });
});
