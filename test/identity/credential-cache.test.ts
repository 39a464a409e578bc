import { expect } from 'chai';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createApp } from '@api/app';
import { apiKeyIdOf } from '@lib/auth/api-key-secret';
import { SharedCredentialCache } from '@lib/auth/credential-cache';
import { closeDeps, createDeps, type Deps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { rawCollection } from '@test/helpers/store';
import { startTcpProxy } from '@test/helpers/tcp-proxy';
import { eventually } from '@test/helpers/wait';

/** Far longer than any test here: only an announced change, never expiry, can make a replica read again. */
const LONG_TTL_MS = 300_000;

/**
 * Authentication's credential cache with two API replicas in this process: the shared test app (`env.app`) and a
 * second one on its own deps, Redis subscriber and a long TTL. Both use the one database and Redis.
 */
describe('credential cache across API replicas', () => {
  let env: TestEnv;
  let other: { deps: Deps; app: Express };
  let org: TestOrg;

  before(async () => {
    env = await testEnv();
    const config = { ...env.config, auth: { ...env.config.auth, credentialCacheTtlMs: LONG_TTL_MS } };
    const deps = await createDeps(config, { logger: createLogger('silent') });
    other = { deps, app: createApp(deps) };
  });

  after(async () => {
    await closeDeps(other.deps);
  });

  beforeEach(async () => {
    org = await createTestOrg(env, 'Credential Cache Org');
  });

  /** A credential both replicas have authenticated and now serve from their caches. */
  async function cachedOnBoth(path: string, token: string) {
    for (const replica of [env, other]) {
      await as(replica, token).get(path).expect(200);
      await eventually(() => replica.deps.credentials.serving);
      await as(replica, token).get(path).expect(200);
    }
  }

  /** Changed behind the repositories' back, so no replica hears of it. */
  const apiKeys = () => rawCollection<{ _id: string; keyHash: string }>(env, 'api_keys');

  it('serves a key from the cache, and refuses it on one replica once another has revoked it', async () => {
    const apiKeyId = apiKeyIdOf(org.apiKey)!;
    await cachedOnBoth(org.path(), org.apiKey);
    // A change made behind the repositories' back is not announced: the cached record still answers.
    const stored = await apiKeys().findOne({ _id: apiKeyId });
    await apiKeys().updateOne({ _id: apiKeyId }, { $set: { keyHash: 'not-this-key' } });
    try {
      await as(other, org.apiKey).get(org.path()).expect(200);
    } finally {
      await apiKeys().updateOne({ _id: apiKeyId }, { $set: { keyHash: stored!.keyHash } });
    }

    await as(env, org.owner.token)
      .get(org.path(`/api-keys/${apiKeyId}`))
      .expect(200);
    await as(env, org.owner.token)
      .delete(org.path(`/api-keys/${apiKeyId}`))
      .expect(200);
    await as(env, org.apiKey).get(org.path()).expect(401);
    await eventually(async () => (await as(other, org.apiKey).get(org.path())).status === 401);
  });

  it("applies a role change made on one replica to the member's next request on the other", async () => {
    await cachedOnBoth(org.path('/users'), org.admin.token);
    await as(env, org.owner.token)
      .put(org.path(`/users/${org.admin.userId}`), { role: 'chat' })
      .expect(200);
    await as(env, org.admin.token).get(org.path('/users')).expect(403);
    await eventually(async () => (await as(other, org.admin.token).get(org.path('/users'))).status === 403);
  });

  it('refuses a member removed on another replica', async () => {
    await cachedOnBoth(org.path(), org.chat.token);
    await as(env, org.owner.token)
      .delete(org.path(`/users/${org.chat.userId}`))
      .expect(200);
    await as(env, org.chat.token).get(org.path()).expect(401);
    await eventually(async () => (await as(other, org.chat.token).get(org.path())).status === 401);
  });

  it("judges a webhook's deliveries by its settings as changed on another replica", async () => {
    const owner = as(env, org.owner.token);
    const created = await owner.post(org.path('/webhooks'), { name: 'Cached hook' }).expect(201);
    const webhookId = created.body.webhookId as string;
    const deliver = (replica: { app: Express }) =>
      request(replica.app)
        .post(org.path(`/webhooks/${webhookId}/execute`))
        .send({ n: 1 });
    for (const replica of [env, other]) {
      await deliver(replica).expect(200);
      await eventually(() => replica.deps.credentials.serving);
      await deliver(replica).expect(200);
    }
    // Deleted behind the repositories' back, so no replica hears of it: the cached webhook still takes deliveries.
    const webhooks = rawCollection<{ _id: string }>(env, 'webhooks');
    const stored = await webhooks.findOne({ _id: webhookId });
    await webhooks.deleteOne({ _id: webhookId });
    try {
      await deliver(other).expect(200);
    } finally {
      await webhooks.insertOne(stored!);
    }

    // Signatures required from now on: an unsigned delivery is refused here at once, and there once it has heard.
    await owner.put(org.path(`/webhooks/${webhookId}`), { signatureVerification: true }).expect(200);
    await deliver(env).expect(401);
    await eventually(async () => (await deliver(other)).status === 401);
    await owner.delete(org.path(`/webhooks/${webhookId}`)).expect(200);
    await deliver(env).expect(404);
    await eventually(async () => (await deliver(other)).status === 404);
    // The deliveries wait for a worker none runs here; they must not run under a later suite's.
    const query = `OrganizationId = '${org.organizationId}' AND ExecutionStatus = 'Running'`;
    for await (const w of env.deps.temporal.client.workflow.list({ query }))
      await env.deps.temporal.client.workflow.getHandle(w.workflowId).terminate('test ended');
  });

  it('serves nothing while it cannot hear changes, and nothing it held before', async () => {
    const { hostname, port } = new URL(env.config.redisUrl);
    const proxy = await startTcpProxy(hostname, Number(port || 6379));
    const redis = new Redis(`redis://127.0.0.1:${proxy.port}`, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    redis.on('error', () => undefined);
    const cache = new SharedCredentialCache(redis, LONG_TTL_MS, createLogger('silent'));
    let reads = 0;
    const read = () =>
      cache.read('key:k', () => {
        reads++;
        return Promise.resolve({ organizationId: org.organizationId });
      });
    try {
      await read();
      await eventually(() => cache.serving);
      await read();
      const held = reads;
      await read();
      expect(reads, 'served from the cache').to.equal(held);

      proxy.cut();
      await eventually(() => !cache.serving);
      await read();
      await read();
      expect(reads, 'read every time while the subscription is down').to.equal(held + 2);

      proxy.restore();
      await eventually(() => cache.serving);
      await read();
      expect(reads, 'nothing held from before the drop').to.equal(held + 3);
      await read();
      expect(reads, 'served from the cache again').to.equal(held + 3);
    } finally {
      await cache.close();
      redis.disconnect();
      await proxy.close();
    }
  });

  it('reads every credential again once its subscription is back after a drop', async () => {
    const apiKeyId = apiKeyIdOf(org.apiKey)!;
    await cachedOnBoth(org.path(), org.apiKey);
    const clients = (await env.deps.redis.client('LIST')) as string;
    const line = clients
      .split('\n')
      .find((l) => l.includes(` name=${other.deps.credentials.connectionName} `));
    const id = /(?:^|\s)id=(\d+)/.exec(line ?? '')?.[1];
    expect(id, 'the subscriber connection is listed by its name').to.be.a('string');
    await env.deps.redis.client('KILL', 'ID', id as string);
    // Deleted behind the repositories' back: no replica announces it, so only a forgotten cache finds out.
    await apiKeys().deleteOne({ _id: apiKeyId });
    await eventually(async () => (await as(other, org.apiKey).get(org.path())).status === 401);
    await eventually(() => other.deps.credentials.serving);
  });

  it("never lets one organization's key or member pass for another's", async () => {
    const second = await createTestOrg(env, 'Credential Cache Other Org');
    await cachedOnBoth(org.path(), org.apiKey);
    await cachedOnBoth(org.path(), org.owner.token);
    await as(other, org.apiKey).get(second.path()).expect(401);
    await as(other, org.owner.token).get(second.path()).expect(401);
  });
});
