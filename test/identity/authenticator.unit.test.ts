import { expect } from 'chai';
import { UnsecuredJWT } from 'jose';
import { generateApiKey } from '@lib/auth/api-key-secret';
import { Authenticator, LAST_USED_RESOLUTION_MS } from '@lib/auth/authenticator';
import { TokenService } from '@lib/auth/tokens';
import type { CredentialRecords } from '@lib/auth/authenticator';

const ORG = 'org_unit';
const USER = 'usr_unit';
const T0 = Date.parse('2026-05-02T10:00:00Z');

interface KeyRecord {
  _id: string;
  organizationId: string;
  keyHash: string;
  creatorUserId: string;
  permissions: Record<string, never>;
  lastUsedAt: Date | null;
}

/**
 * API-key records and their creator's membership in memory. Every lastUsedAt write the authenticator issues is
 * recorded and left in flight until the test settles it, as a slow database would.
 */
function fakeStore() {
  const records = new Map<string, KeyRecord>();
  const writes: Array<{ apiKeyId: string; at: number; settle: (err?: Error) => void }> = [];
  const repos = {
    apiKeyRecords: { findApiKeyCrossOrg: (id: string) => Promise.resolve(records.get(id) ?? null) },
    users: {
      member: (organizationId: string, userId: string) =>
        Promise.resolve(
          organizationId === ORG && userId === USER ? { organizationId, userId, role: 'admin' } : null,
        ),
    },
    apiKeys: {
      touch: (_organizationId: string, apiKeyId: string, at: Date) =>
        new Promise<void>((resolve, reject) =>
          writes.push({ apiKeyId, at: at.getTime(), settle: (err) => (err ? reject(err) : resolve()) }),
        ),
    },
  } as unknown as CredentialRecords;
  const newKey = (lastUsedAt: Date | null = null) => {
    const { apiKeyId, key, keyHash } = generateApiKey();
    records.set(apiKeyId, {
      _id: apiKeyId,
      organizationId: ORG,
      keyHash,
      creatorUserId: USER,
      permissions: {},
      lastUsedAt,
    });
    return { apiKeyId, key };
  };
  return { repos, writes, newKey };
}

const tokens = new TokenService('unit-test-secret-of-at-least-32-bytes!!', 'https://issuer.test', 3600);

describe('authenticator', () => {
  const realNow = Date.now;
  let now: number;
  beforeEach(() => {
    now = T0;
    Date.now = () => now;
  });
  afterEach(() => {
    Date.now = realNow;
  });

  describe("API keys' lastUsedAt", () => {
    it('is written at most once a minute per key, however often the key is used', async () => {
      const { repos, writes, newKey } = fakeStore();
      const auth = new Authenticator(repos, tokens);
      const a = newKey();
      const b = newKey();
      const use = (key: string) => auth.authenticate(`Bearer ${key}`, ORG);
      for (const key of [a.key, a.key, b.key, a.key, b.key]) await use(key);
      expect(writes.map((w) => [w.apiKeyId, w.at])).to.deep.equal([
        [a.apiKeyId, T0],
        [b.apiKeyId, T0],
      ]);
      now = T0 + LAST_USED_RESOLUTION_MS - 1;
      await use(a.key);
      expect(writes).to.have.length(2);
      now = T0 + LAST_USED_RESOLUTION_MS;
      await use(a.key);
      await use(a.key);
      expect(writes.map((w) => [w.apiKeyId, w.at]).slice(2)).to.deep.equal([
        [a.apiKeyId, T0 + LAST_USED_RESOLUTION_MS],
      ]);
    });

    it('is not written when the stored value is less than a minute old (another replica wrote it)', async () => {
      const { repos, writes, newKey } = fakeStore();
      const auth = new Authenticator(repos, tokens);
      const { key, apiKeyId } = newKey(new Date(T0 - 30_000));
      await auth.authenticate(`Bearer ${key}`, ORG);
      expect(writes).to.deep.equal([]);
      now = T0 + 30_000;
      await auth.authenticate(`Bearer ${key}`, ORG);
      expect(writes.map((w) => [w.apiKeyId, w.at])).to.deep.equal([[apiKeyId, T0 + 30_000]]);
    });

    it('is written again on the next use after a write failed, and a failed write never fails a request', async () => {
      const { repos, writes, newKey } = fakeStore();
      const auth = new Authenticator(repos, tokens);
      const { key } = newKey();
      const ctx = await auth.authenticate(`Bearer ${key}`, ORG);
      expect(ctx).to.include({ userId: USER, via: 'api_key' });
      const failed = writes[0]!;
      failed.settle(new Error('database restarting'));
      // The failure is handled before the next turn of the event loop.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await auth.authenticate(`Bearer ${key}`, ORG);
      expect(writes).to.have.length(2);
      writes[1]!.settle();
      await new Promise<void>((resolve) => setImmediate(resolve));
      await auth.authenticate(`Bearer ${key}`, ORG);
      expect(writes).to.have.length(2);
    });

    it('remembers the last write of at most 10,000 keys, then starts afresh', async () => {
      const { repos, writes, newKey } = fakeStore();
      const auth = new Authenticator(repos, tokens);
      const keys = Array.from({ length: 10_001 }, () => newKey());
      for (const { key } of keys.slice(0, 10_000)) await auth.authenticate(`Bearer ${key}`, ORG);
      expect(writes).to.have.length(10_000);
      // The 10,001st key finds the memory full: it is emptied, so the first key's write is forgotten...
      await auth.authenticate(`Bearer ${keys[10_000]!.key}`, ORG);
      await auth.authenticate(`Bearer ${keys[0]!.key}`, ORG);
      // ...while the 10,001st is remembered from then on.
      await auth.authenticate(`Bearer ${keys[10_000]!.key}`, ORG);
      expect(writes.slice(10_000).map((w) => w.apiKeyId)).to.deep.equal([
        keys[10_000]!.apiKeyId,
        keys[0]!.apiKeyId,
      ]);
    });
  });

  describe('the Authorization header', () => {
    it('accepts any case of Bearer, several spaces and trailing space around the credential', async () => {
      const { repos, newKey } = fakeStore();
      const auth = new Authenticator(repos, tokens);
      const { key } = newKey();
      for (const header of [`Bearer ${key}`, `bearer  ${key}`, `Bearer\t${key} `, `BEARER ${key}  `]) {
        expect(await auth.authenticate(header, ORG), header).to.include({ userId: USER });
        expect(await auth.organizationOf(header), header).to.equal(ORG);
      }
    });

    it('refuses anything before Bearer, or after the credential', async () => {
      const { repos, newKey } = fakeStore();
      const auth = new Authenticator(repos, tokens);
      const { key } = newKey();
      for (const header of [`xBearer ${key}`, `Bearer ${key} extra`, `Basic ${key}`, key, '']) {
        expect(await auth.organizationOf(header), header).to.equal(null);
        await auth.authenticate(header, ORG).then(
          () => expect.fail(`accepted ${header}`),
          (err: { status: number; message: string }) =>
            expect(err).to.include({ status: 401, message: 'Authorization: Bearer <token> is required' }),
        );
      }
      expect(await auth.organizationOf(undefined)).to.equal(null);
    });
  });

  describe('service tokens', () => {
    it('says why a token without an issuer is refused when no OIDC issuer is configured', async () => {
      now = realNow(); // the token service signs on this clock, and jose verifies on the real one
      const { repos } = fakeStore();
      const auth = new Authenticator(repos, tokens);
      const noIssuer = new UnsecuredJWT({ typ: 'session', org: ORG }).setSubject(USER).encode();
      await auth.authenticate(`Bearer ${noIssuer}`, ORG).then(
        () => expect.fail('accepted an unsigned token'),
        (err: { status: number; message: string }) =>
          expect(err).to.include({ status: 401, message: 'token signature or claims are invalid' }),
      );
      const { token } = await tokens.signSession(ORG, USER);
      expect(await auth.authenticate(`Bearer ${token}`, ORG)).to.include({ userId: USER, via: 'session' });
    });
  });
});
