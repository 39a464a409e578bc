import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { stored } from '@test/helpers/store';

describe('API keys', () => {
  let env: TestEnv;
  let org: TestOrg;

  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Keys Org');
  });

  const permissions = { assume_role: { write: true }, agents: { read: true, write: false } };

  it('shows the key once at creation and stores only its hash', async () => {
    const res = await as(env, org.admin.token)
      .post(org.path('/api-keys'), { description: 'CRM', permissions })
      .expect(201);
    const { key, apiKeyId } = res.body;
    expect(key).to.match(/^awk_[A-Za-z0-9_-]{40,}$/);
    expect(res.body).to.deep.include({
      description: 'CRM',
      permissions,
      creatorUserId: org.admin.userId,
      lastUsedAt: null,
    });
    expect(key.startsWith(res.body.keyPrefix)).to.equal(true);

    const got = await as(env, org.owner.token)
      .get(org.path(`/api-keys/${apiKeyId}`))
      .expect(200);
    expect(got.body).to.not.have.property('key');
    const list = await as(env, org.owner.token).get(org.path('/api-keys')).expect(200);
    expect(JSON.stringify(list.body)).to.not.contain(key);
    expect(list.body.totalRows).to.equal(2); // plus the bootstrap key

    const record = await stored(env, 'api_keys').findById(apiKeyId).lean();
    expect(JSON.stringify(record)).to.not.contain(key);
    expect(record!.keyHash).to.equal(createHash('sha256').update(key).digest('hex'));
  });

  it('authenticates as its creator in its organization and records its use', async () => {
    const { key, apiKeyId } = (
      await as(env, org.admin.token).post(org.path('/api-keys'), { permissions }).expect(201)
    ).body;
    const res = await as(env, key).get(org.path('/users')).expect(200);
    expect(res.body.totalRows).to.equal(3);
    // Acting as an admin, it cannot remove the owner.
    await as(env, key)
      .delete(org.path(`/users/${org.owner.userId}`))
      .expect(403);
    // The use is recorded after the answer (bookkeeping never delays a request): wait for it.
    const lastUsedAt = await eventually(async () => {
      const got = await as(env, org.admin.token)
        .get(org.path(`/api-keys/${apiKeyId}`))
        .expect(200);
      return (got.body.lastUsedAt as string | null) ?? undefined;
    });
    expect(Date.parse(lastUsedAt)).to.be.within(Date.now() - 60_000, Date.now() + 1000);
  });

  it('never moves lastUsedAt back when an earlier use is recorded after a later one', async () => {
    const { apiKeyId } = (
      await as(env, org.admin.token).post(org.path('/api-keys'), { permissions }).expect(201)
    ).body;
    const keys = env.deps.repos.tenant(org.organizationId).apiKeys;
    await keys.touch(apiKeyId, new Date('2026-05-02T10:00:00Z'));
    await keys.touch(apiKeyId, new Date('2026-05-02T09:59:00Z'));
    const got = await as(env, org.admin.token)
      .get(org.path(`/api-keys/${apiKeyId}`))
      .expect(200);
    expect(got.body.lastUsedAt).to.equal('2026-05-02T10:00:00.000Z');
  });

  it('refuses a key with a real id and a wrong secret', async () => {
    const { key } = (await as(env, org.admin.token).post(org.path('/api-keys'), { permissions }).expect(201))
      .body;
    await as(env, key).get(org.path('/users')).expect(200);
    // Same record id (the first 28 characters), another secret of the same shape.
    const last = key.at(-1) === 'A' ? 'B' : 'A';
    const forged = `${key.slice(0, -1)}${last}`;
    const res = await as(env, forged).get(org.path('/users')).expect(401);
    expect(res.body.error.code).to.equal('unauthorized');
    await as(env, `${key.slice(0, 28)}${'x'.repeat(key.length - 28)}`)
      .get(org.path('/users'))
      .expect(401);
  });

  it('updates description and permissions, and stops working once deleted', async () => {
    const { key, apiKeyId } = (await as(env, org.owner.token).post(org.path('/api-keys'), {}).expect(201))
      .body;
    const updated = await as(env, org.owner.token)
      .put(org.path(`/api-keys/${apiKeyId}`), {
        description: 'renamed',
        permissions: { webhooks: { read: true } },
      })
      .expect(200);
    expect(updated.body).to.deep.include({
      description: 'renamed',
      permissions: { webhooks: { read: true } },
    });
    await as(env, key).get(org.path()).expect(200);
    const deleted = await as(env, org.owner.token)
      .delete(org.path(`/api-keys/${apiKeyId}`))
      .expect(200);
    expect(deleted.body).to.deep.equal({ message: 'API key deleted', apiKeyId });
    await as(env, key).get(org.path()).expect(401);
    await as(env, org.owner.token)
      .get(org.path(`/api-keys/${apiKeyId}`))
      .expect(404);
  });

  it('rejects unknown scopes and non-boolean flags', async () => {
    await as(env, org.owner.token)
      .post(org.path('/api-keys'), { permissions: { billing: { read: true } } })
      .expect(400);
    await as(env, org.owner.token)
      .post(org.path('/api-keys'), { permissions: { agents: { read: 'yes' } } })
      .expect(400);
    await as(env, org.owner.token)
      .post(org.path('/api-keys'), { permissions: { agents: { delete: true } } })
      .expect(400);
  });

  it('can be managed only by owners and admins with a user session, never with an API key', async () => {
    const res = await as(env, org.apiKey).get(org.path('/api-keys')).expect(403);
    expect(res.body.error.message).to.contain('user session');
    await as(env, org.apiKey).post(org.path('/api-keys'), {}).expect(403);
    await as(env, org.chat.token).get(org.path('/api-keys')).expect(403);
    await as(env, org.chat.token).post(org.path('/api-keys'), {}).expect(403);
  });

  it('keeps each organization to its own keys', async () => {
    const other = await createTestOrg(env, 'Other Keys Org');
    const { apiKeyId } = (await as(env, org.owner.token).post(org.path('/api-keys'), {}).expect(201)).body;
    await as(env, other.owner.token)
      .get(other.path(`/api-keys/${apiKeyId}`))
      .expect(404);
    await as(env, other.owner.token)
      .put(other.path(`/api-keys/${apiKeyId}`), { description: 'x' })
      .expect(404);
    await as(env, other.owner.token)
      .delete(other.path(`/api-keys/${apiKeyId}`))
      .expect(404);
    await as(env, org.apiKey).get(other.path()).expect(401);
    const list = await as(env, other.owner.token).get(other.path('/api-keys')).expect(200);
    expect(list.body.items.map((k: { apiKeyId: string }) => k.apiKeyId)).to.not.include(apiKeyId);
  });

  it('stops working when its creator leaves the organization', async () => {
    const { key } = (await as(env, org.admin.token).post(org.path('/api-keys'), {}).expect(201)).body;
    await as(env, key).get(org.path()).expect(200);
    await as(env, org.owner.token)
      .delete(org.path(`/users/${org.admin.userId}`))
      .expect(200);
    const res = await as(env, key).get(org.path()).expect(401);
    expect(res.body.error.message).to.equal(
      'the creator of this API key is not a member of this organization',
    );
  });
});
