import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createTurnActivities } from '@activities/conversations';
import { createRealtimeEmitter } from '@lib/realtime/emitter';
import { createLogger } from '@lib/logger';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg } from '@test/helpers/org';
import { connectClient } from '@test/helpers/realtime';
import { eventually } from '@test/helpers/wait';

describe('realtime event order', () => {
  let env: TestEnv;
  before(async () => {
    env = await testEnv();
  });

  it("delivers a worker's first events in the order it emitted them, while its Redis connection comes up", async () => {
    const org = await createTestOrg(env);
    const client = await connectClient(env, org.organizationId, org.owner.token);
    // A worker's connection as createDeps makes it: connected by its first command.
    const redis = new Redis(env.config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
    try {
      const realtime = createRealtimeEmitter(redis);
      const target = {
        organizationId: org.organizationId,
        userId: org.owner.userId,
        conversationId: 'cnv_order',
      };
      // A stream of deltas spread over the connection's start, so some are emitted while it connects, some once
      // the socket is up but not yet ready (where ioredis wrote PUBLISH ahead of its queue), some once ready.
      const statuses = new Set<string>();
      let seq = 0;
      // Until an event was emitted once the connection was ready (checking the status alone could end the loop
      // on a connection that became ready after the last emit).
      while (!statuses.has('ready') || seq < 40) {
        statuses.add(redis.status);
        realtime.emit('conversation', target, { type: 'delta', requestId: 'order', seq: seq++, text: 'x' });
        await new Promise(setImmediate);
      }
      expect([...statuses]).to.include.members(['connecting', 'connect', 'ready']);
      const arrived = await eventually(() => {
        const got = client.turn('order').map((e) => e.payload.seq as number);
        return got.length === seq ? got : undefined;
      });
      expect(arrived).to.deep.equal(Array.from({ length: seq }, (_, i) => i));
    } finally {
      client.close();
      redis.disconnect();
    }
  });

  it("sends a turn's final event once when saveReply runs again on another worker (its first died after sending)", async () => {
    const org = await createTestOrg(env);
    const client = await connectClient(env, org.organizationId, org.owner.token);
    // Two worker processes, each with its own connection: the attempt that died, and the retry.
    const connections = [0, 1].map(() => new Redis(env.config.redisUrl, { maxRetriesPerRequest: 2 }));
    try {
      const repos = env.deps.repos;
      const conversation = await repos.tenant(org.organizationId).conversations.createForRequest('req-once', {
        agentId: 'agt_once',
        title: 'Once',
        creatorUserId: org.owner.userId,
        isBrowserTask: false,
      });
      const target = {
        organizationId: org.organizationId,
        userId: org.owner.userId,
        conversationId: conversation._id,
      };
      const attempts = connections.map((redis) =>
        createTurnActivities({
          repos,
          agents: env.deps.services.agents,
          modelTools: env.deps.services.modelTools,
          llm: env.deps.llm,
          realtime: createRealtimeEmitter(redis),
          logger: createLogger('silent'),
        }),
      );
      const reply = { target, requestId: 'req-once', text: 'The answer', status: 'complete' as const };
      const views = [];
      for (const attempt of attempts) views.push(await attempt.saveReply(reply));
      expect(views[1]).to.deep.equal(views[0]);
      // another turn's final event still goes out: what arrives after it shows nothing more came for the first
      await attempts[1]!.saveReply({ ...reply, requestId: 'req-other', text: 'Another answer' });
      await eventually(() => client.turn('req-other').length === 1);
      const finals = client.turn('req-once').map((e) => e.payload.type);
      expect(finals).to.deep.equal(['message']);
      const stored = await repos.tenant(org.organizationId).conversations.messages(conversation._id);
      expect(stored.filter((m) => m.role === 'assistant')).to.have.length(2);
    } finally {
      client.close();
      for (const c of connections) c.disconnect();
    }
  });

  it('flush() returns once Redis took every event, so what another connection emits next arrives after them', async () => {
    const org = await createTestOrg(env);
    const client = await connectClient(env, org.organizationId, org.owner.token);
    // Two worker processes: one streams a model call's deltas while its connection comes up, the other emits the
    // turn's next event once the first says it is done.
    const first = new Redis(env.config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
    const second = new Redis(env.config.redisUrl, { maxRetriesPerRequest: 2 });
    try {
      const [streaming, next] = [createRealtimeEmitter(first), createRealtimeEmitter(second)];
      await eventually(() => second.status === 'ready');
      const target = {
        organizationId: org.organizationId,
        userId: org.owner.userId,
        conversationId: 'cnv_flush',
      };
      for (let seq = 0; seq < 50; seq++)
        streaming.emit('conversation', target, { type: 'delta', requestId: 'flush', seq, text: 'x' });
      await streaming.flush();
      next.emit('conversation', target, { type: 'message', requestId: 'flush' });
      const arrived = await eventually(() => {
        const got = client.turn('flush').map((e) => e.payload.type);
        return got.length === 51 ? got : undefined;
      });
      expect(arrived.indexOf('message')).to.equal(50);
    } finally {
      client.close();
      first.disconnect();
      second.disconnect();
    }
  });
});
