import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { Authenticator } from '@lib/auth/authenticator';
import { CredentialCache } from '@lib/auth/credential-cache';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { loadConfig } from '@lib/config';
import { addMember, as, createTestOrg, type TestOrg } from '@test/helpers/org';

/** What the authenticator checks credentials against, wired as lib/deps.ts wires it. */
const recordsOf = (env: TestEnv) => ({
  apiKeyRecords: env.deps.repos.apiKeyRecords,
  users: env.deps.services.users,
  apiKeys: env.deps.services.apiKeys,
});

describe('external OIDC sessions', () => {
  let env: TestEnv;
  let org: TestOrg;
  let server: Server;
  let issuer: string;
  let privateKey: KeyLike;

  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'OIDC Org');
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    // The keys are where OIDC discovery puts them, and nowhere else.
    server = createServer((req, res) => {
      if (req.url !== '/.well-known/jwks.json') {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const idToken = (claims: Record<string, unknown>, key: KeyLike = privateKey) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience('workspace')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(key);

  it('accepts a token from the configured issuer, verified through its JWKS, for a member found by verified email', async () => {
    const auth = new Authenticator(recordsOf(env), env.deps.tokens, { issuer, audience: 'workspace' });
    const token = await idToken({ sub: 'idp|123', email: org.admin.email, email_verified: true });
    const ctx = await auth.authenticate(`Bearer ${token}`, org.organizationId);
    expect(ctx).to.include({ userId: org.admin.userId, role: 'admin', via: 'session' });
    // It lasts as long as the issuer said (10 minutes), and the service's own sessions still work beside it.
    expect(ctx.expiresAt!.getTime() - Date.now()).to.be.within(9 * 60_000, 10 * 60_000 + 1000);
    expect(await auth.authenticate(`Bearer ${org.owner.token}`, org.organizationId)).to.include({
      userId: org.owner.userId,
      via: 'session',
    });
    const other = await createTestOrg(env, 'Not Mine');
    await auth.authenticate(`Bearer ${token}`, other.organizationId).then(
      () => expect.fail('a member of one organization reached another'),
      (err: { status: number }) => expect(err.status).to.equal(401),
    );
  });

  it('finds an account by email only when the issuer verified the address, then by the linked subject', async () => {
    const auth = new Authenticator(recordsOf(env), env.deps.tokens, { issuer, audience: 'workspace' });
    const member = await addMember(env, org.organizationId, 'chat', 'Vera');
    for (const claims of [{ email: member.email }, { email: member.email, email_verified: 'true' }]) {
      const token = await idToken({ sub: 'idp|vera', ...claims });
      await auth.authenticate(`Bearer ${token}`, org.organizationId).then(
        () => expect.fail(`an unverified address signed in: ${JSON.stringify(claims)}`),
        (err: { status: number }) => expect(err.status).to.equal(401),
      );
    }
    const verified = await idToken({ sub: 'idp|vera', email: member.email, email_verified: true });
    expect(await auth.authenticate(`Bearer ${verified}`, org.organizationId)).to.include({
      userId: member.userId,
    });
    // Linked: the subject alone now finds the account; another subject with the same address does not.
    const bySubject = await idToken({ sub: 'idp|vera' });
    expect(await auth.authenticate(`Bearer ${bySubject}`, org.organizationId)).to.include({
      userId: member.userId,
    });
    const impostor = await idToken({ sub: 'idp|other', email: member.email, email_verified: true });
    await auth.authenticate(`Bearer ${impostor}`, org.organizationId).then(
      () => expect.fail('a second identity took over a linked account'),
      (err: { status: number; message: string }) =>
        expect(err).to.include({ status: 401, message: 'no account for this identity' }),
    );
  });

  it("never lets one organization's assume-role decide which account another's OIDC user opens", async () => {
    const auth = new Authenticator(recordsOf(env), env.deps.tokens, { issuer, audience: 'workspace' });
    const victim = await addMember(env, org.organizationId, 'admin', 'Victor');
    const attackerOrg = await createTestOrg(env, 'Attacker Org');
    // The attacker names the victim's OIDC subject as their own external id for a new user they control.
    const minted = await as(env, attackerOrg.owner.token)
      .post(attackerOrg.path('/assume-role'), {
        userId: 'idp|victor',
        userEmail: `mallory-${Date.now()}@evil.test`,
      })
      .expect(200);
    const token = await idToken({ sub: 'idp|victor', email: victim.email, email_verified: true });
    expect(await auth.authenticate(`Bearer ${token}`, org.organizationId)).to.include({
      userId: victim.userId,
    });
    await auth.authenticate(`Bearer ${token}`, attackerOrg.organizationId).then(
      () => expect.fail(`the victim signed in as ${minted.body.userId}`),
      (err: { status: number; message: string }) =>
        expect(err).to.include({
          status: 401,
          message: 'this identity is not a member of this organization',
        }),
    );
  });

  it('finds the keys of an issuer written with a trailing slash', async () => {
    const slashed = `${issuer}/`;
    const auth = new Authenticator(recordsOf(env), env.deps.tokens, {
      issuer: slashed,
      audience: 'workspace',
    });
    const member = await addMember(env, org.organizationId, 'chat', 'Sol');
    const token = await new SignJWT({ sub: 'idp|sol', email: member.email, email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(slashed)
      .setAudience('workspace')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    expect(await auth.authenticate(`Bearer ${token}`, org.organizationId)).to.include({
      userId: member.userId,
    });
  });

  it('requires an audience whenever an issuer is configured', () => {
    expect(() => loadConfig({ ...process.env, OIDC_ISSUER: issuer, OIDC_AUDIENCE: '' })).to.throw(
      'OIDC_AUDIENCE',
    );
    expect(
      loadConfig({ ...process.env, OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'workspace' }).auth.oidc,
    ).to.include({
      audience: 'workspace',
    });
  });

  it('refuses a token for another audience, and a token without a subject', async () => {
    const auth = new Authenticator(recordsOf(env), env.deps.tokens, { issuer, audience: 'workspace' });
    const otherApp = await new SignJWT({ sub: 'idp|123', email: org.admin.email, email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience('another-application')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    // A member never signed in before, whose verified address would otherwise find their account.
    const fresh = await addMember(env, org.organizationId, 'chat', 'Nadia');
    const noSubject = await idToken({ email: fresh.email, email_verified: true });
    // A subject that is empty or not a string names nobody either (it must not be linked to an account).
    const emptySubject = await idToken({ sub: '', email: fresh.email, email_verified: true });
    const numberSubject = await idToken({ sub: 42, email: fresh.email, email_verified: true });
    for (const [token, message] of [
      [otherApp, 'token signature or claims are invalid'],
      [noSubject, 'token has no subject'],
      [emptySubject, 'token has no subject'],
      [numberSubject, 'token has no subject'],
    ]) {
      await auth.authenticate(`Bearer ${token}`, org.organizationId).then(
        () => expect.fail('accepted a token not meant for this service or naming nobody'),
        (err: { status: number; message: string }) => expect(err).to.include({ status: 401, message }),
      );
    }
  });

  it('refuses a token signed by another key', async () => {
    const auth = new Authenticator(recordsOf(env), env.deps.tokens, { issuer, audience: 'workspace' });
    const stranger = await generateKeyPair('RS256');
    const token = await idToken({ sub: 'idp|123', email: org.admin.email }, stranger.privateKey);
    await auth.authenticate(`Bearer ${token}`, org.organizationId).then(
      () => expect.fail('a token with a foreign signature was accepted'),
      (err: { status: number }) => expect(err.status).to.equal(401),
    );
  });

  it("with the credential cache, never serves one organization's membership in another", async () => {
    const cache = new CredentialCache(60_000);
    cache.setUsable(true);
    const auth = new Authenticator(recordsOf(env), env.deps.tokens, { issuer, audience: 'workspace' }, cache);
    const member = await addMember(env, org.organizationId, 'admin', 'Cora');
    const other = await createTestOrg(env, 'OIDC Other Org');
    await env.deps.repos
      .tenant(other.organizationId)
      .members.add({ _id: member.userId, name: 'Cora', email: member.email }, 'chat');
    const token = await idToken({ sub: 'idp|cora', email: member.email, email_verified: true });
    for (let i = 0; i < 2; i++) {
      expect(await auth.authenticate(`Bearer ${token}`, org.organizationId)).to.include({
        organizationId: org.organizationId,
        role: 'admin',
      });
      expect(await auth.authenticate(`Bearer ${token}`, other.organizationId)).to.include({
        organizationId: other.organizationId,
        role: 'chat',
      });
    }
  });
});
