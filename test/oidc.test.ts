import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { Authenticator } from '@lib/auth/authenticator';
import { testEnv, type TestEnv } from './helpers/env';
import { createTestOrg, type TestOrg } from './helpers/org';

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
    server = createServer((_req, res) => {
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

  it('accepts a token from the configured issuer, verified through its JWKS, for a member found by email', async () => {
    const auth = new Authenticator(env.deps.repos, env.deps.tokens, { issuer, audience: 'workspace' });
    const token = await idToken({ sub: 'idp|123', email: org.admin.email });
    const ctx = await auth.authenticate(`Bearer ${token}`, org.organizationId);
    expect(ctx).to.include({ userId: org.admin.userId, role: 'admin', via: 'session' });
    const other = await createTestOrg(env, 'Not Mine');
    await auth.authenticate(`Bearer ${token}`, other.organizationId).then(
      () => expect.fail('a member of one organization reached another'),
      (err: { status: number }) => expect(err.status).to.equal(401),
    );
  });

  it('refuses a token signed by another key', async () => {
    const auth = new Authenticator(env.deps.repos, env.deps.tokens, { issuer, audience: 'workspace' });
    const stranger = await generateKeyPair('RS256');
    const token = await idToken({ sub: 'idp|123', email: org.admin.email }, stranger.privateKey);
    await auth.authenticate(`Bearer ${token}`, org.organizationId).then(
      () => expect.fail('a token with a foreign signature was accepted'),
      (err: { status: number }) => expect(err.status).to.equal(401),
    );
  });
});
