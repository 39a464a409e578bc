import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader, SignJWT, UnsecuredJWT } from 'jose';
import { ASSUME_ROLE_TTL_SECONDS, InvalidTokenError, TokenService } from '@lib/auth/tokens';

const SECRET = 'unit-test-secret-of-at-least-32-bytes!!';
const ISSUER = 'https://issuer.test';
const tokens = new TokenService(SECRET, ISSUER, 3600);
const key = new TextEncoder().encode(SECRET);

/** A token signed with the service's key but claims of the test's choosing. */
function forged(claims: Record<string, unknown>, edit?: (jwt: SignJWT) => SignJWT) {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience('agent-workspace-api')
    .setSubject('usr_1')
    .setIssuedAt(now)
    .setExpirationTime(now + 60);
  if (edit) jwt = edit(jwt);
  return jwt.sign(key);
}

async function refusal(token: string): Promise<string> {
  return tokens.verify(token).then(
    () => expect.fail('verified'),
    (err: unknown) => {
      expect(err).to.be.instanceOf(InvalidTokenError);
      return (err as Error).message;
    },
  );
}

describe('service tokens', () => {
  it('round-trips a session bound to its organization and subject, with its lifetime', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { token, expiresAt } = await tokens.signSession('org_1', 'usr_1');
    const claims = await tokens.verify(token);
    expect(claims).to.include({ type: 'session', organizationId: 'org_1', userId: 'usr_1' });
    expect(claims.permissions).to.deep.equal([]);
    expect(claims.expiresAt.getTime()).to.equal(expiresAt.getTime());
    expect(claims.expiresAt.getTime() - claims.issuedAt.getTime()).to.equal(3600_000);
    expect(claims.issuedAt.getTime()).to.be.at.least(before * 1000);
    expect(claims.tokenId).to.match(/^[0-9a-f-]{36}$/);
  });

  it('signs assume-role tokens for two hours with their permissions', async () => {
    const { token } = await tokens.signAssumeRole('org_1', 'usr_1', ['agents.use:agt_1']);
    const claims = await tokens.verify(token);
    expect(claims).to.include({ type: 'assume_role', organizationId: 'org_1' });
    expect(claims.permissions).to.deep.equal(['agents.use:agt_1']);
    expect(claims.expiresAt.getTime() - claims.issuedAt.getTime()).to.equal(ASSUME_ROLE_TTL_SECONDS * 1000);
    expect(ASSUME_ROLE_TTL_SECONDS).to.equal(7200);
  });

  it('shows the holder of a token what it is: the chat role in an assume-role token, no role in a session', async () => {
    // An embedding page reads its token's claims (the token is not encrypted): they must say what it grants.
    const assumed = (await tokens.signAssumeRole('org_1', 'usr_1', [])).token;
    expect(decodeJwt(assumed)).to.include({ typ: 'assume_role', org: 'org_1', sub: 'usr_1', role: 'chat' });
    const session = (await tokens.signSession('org_1', 'usr_1')).token;
    expect(decodeJwt(session)).to.include({ typ: 'session', org: 'org_1', sub: 'usr_1' });
    expect(decodeJwt(session)).to.not.have.property('role');
    for (const token of [assumed, session]) {
      expect(decodeProtectedHeader(token)).to.deep.equal({ alg: 'HS256', typ: 'JWT' });
    }
  });

  it('refuses another secret, issuer or audience, an unsigned token and an expired one', async () => {
    const { token } = await new TokenService('another-secret-of-at-least-32-bytes!!', ISSUER, 60).signSession(
      'org_1',
      'usr_1',
    );
    expect(await refusal(token)).to.equal('token signature or claims are invalid');
    const otherIssuer = await new TokenService(SECRET, 'https://other.test', 60).signSession(
      'org_1',
      'usr_1',
    );
    expect(await refusal(otherIssuer.token)).to.equal('token signature or claims are invalid');
    const otherAudience = await forged({ typ: 'session', org: 'org_1' }, (j) =>
      j.setAudience('someone-else'),
    );
    expect(await refusal(otherAudience)).to.equal('token signature or claims are invalid');
    const unsigned = new UnsecuredJWT({ typ: 'session', org: 'org_1' })
      .setIssuer(ISSUER)
      .setAudience('agent-workspace-api')
      .setSubject('usr_1')
      .encode();
    expect(await refusal(unsigned)).to.equal('token signature or claims are invalid');
    const expired = await forged({ typ: 'session', org: 'org_1' }, (j) => j.setExpirationTime(1000));
    expect(await refusal(expired)).to.equal('token has expired');
  });

  it('refuses a well-signed token whose claims do not describe a session or an assume-role token', async () => {
    for (const claims of [
      { typ: 'refresh', org: 'org_1' },
      { org: 'org_1' },
      { typ: 'session' },
      { typ: 'session', org: 42 },
    ]) {
      expect(await refusal(await forged(claims)), JSON.stringify(claims)).to.equal(
        'token claims are invalid',
      );
    }
    const noSubject = await forged({ typ: 'session', org: 'org_1' }, (j) => j.setSubject(undefined as never));
    expect(await refusal(noSubject)).to.equal('token claims are invalid');
  });

  it('keeps only string permissions, and makes up no token id', async () => {
    const claims = await tokens.verify(
      await forged({ typ: 'assume_role', org: 'org_1', permissions: ['a', 1, null, 'b'] }),
    );
    expect(claims.permissions).to.deep.equal(['a', 'b']);
    const notAList = await tokens.verify(
      await forged({ typ: 'assume_role', org: 'org_1', permissions: 'a' }),
    );
    expect(notAList.permissions).to.deep.equal([]);
    // A token signed without an id (jti) has none: nothing is made up.
    expect(notAList.tokenId).to.equal('');
  });
});
