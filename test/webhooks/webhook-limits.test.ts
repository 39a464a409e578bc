import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import type { TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { TooManyRequestsError } from '@lib/errors';
import { createLogger } from '@lib/logger';
import { WebhookRateLimiter } from '@lib/webhooks/rate-limit';
import { useWebhookSuite } from '@test/webhooks/webhook-suite';

const silent = createLogger('silent');

// Management, limits and the checks of POST …/execute that answer before anything runs (no worker here: an
// accepted delivery's workflow just waits on this file's task queue).
describe('webhooks: management, limits, signatures', function () {
  this.timeout(300_000);
  const { suite, admin, execute, createChain, createWebhook } = useWebhookSuite();
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  before(async () => {
    other = await createTestOrg(suite.env, 'Other Webhooks Org');
  });
  beforeEach(() => {
    ({ env, org } = suite);
  });

  it('accepts 500 handlers per webhook, even when they are added at once, and refuses the 501st', async () => {
    const { webhookId } = await createWebhook();
    const chainId = await createChain();
    const body = { handlerType: 'action-chain', actionChainId: chainId, instructions: 'x' };
    const statuses: number[] = [];
    // 510 requests, 10 at a time: exactly 500 are stored
    for (let batch = 0; batch < 51; batch++) {
      const results = await Promise.all(
        Array.from({ length: 10 }, () => admin().post(org.path(`/webhooks/${webhookId}/handlers`), body)),
      );
      statuses.push(...results.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 201)).to.have.length(500);
    expect(statuses.filter((s) => s === 400)).to.have.length(10);
    const refused = await admin()
      .post(org.path(`/webhooks/${webhookId}/handlers`), body)
      .expect(400);
    expect(refused.body.error.message).to.contain('at most 500 handlers');
    expect(
      (
        await admin()
          .get(org.path(`/webhooks/${webhookId}/handlers`))
          .expect(200)
      ).body.totalRows,
    ).to.equal(500);
    // a freed place can be taken again
    const first = (
      await admin()
        .get(org.path(`/webhooks/${webhookId}/handlers?limit=1`))
        .expect(200)
    ).body.items[0];
    await admin()
      .delete(org.path(`/webhooks/${webhookId}/handlers/${first.handlerId}`))
      .expect(200);
    await admin()
      .post(org.path(`/webhooks/${webhookId}/handlers`), body)
      .expect(201);
    await admin()
      .post(org.path(`/webhooks/${webhookId}/handlers`), body)
      .expect(400);
  });

  it('verifies signatures when asked: valid accepted, invalid, unsigned and stale refused; the secret is shown once', async () => {
    const { webhookId, signingSecret } = await createWebhook({ signatureVerification: true });
    expect(signingSecret).to.match(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const read = await admin()
      .get(org.path(`/webhooks/${webhookId}`))
      .expect(200);
    expect(read.body).to.not.have.property('signingSecret');
    expect(JSON.stringify((await admin().get(org.path('/webhooks')).expect(200)).body)).to.not.contain(
      signingSecret,
    );

    const body = JSON.stringify({ event: 'paid', amount: 42 });
    const now = Math.floor(Date.now() / 1000);
    const send = (id: string, timestamp: number, signature: string) =>
      execute(org, webhookId)
        .set('content-type', 'application/json')
        .set('webhook-id', id)
        .set('webhook-timestamp', String(timestamp))
        .set('webhook-signature', signature)
        .send(body);
    // Signed as docs/webhooks.md says a sender signs (HMAC-SHA256 of "<id>.<timestamp>.<raw body>" keyed with the
    // secret's base64 part), not with the service's own sign(): the oracle must not be the code under test.
    const v1 = (id: string, timestamp: number, secret = signingSecret!, signed = body) =>
      `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
        .update(`${id}.${timestamp}.${signed}`)
        .digest('base64')}`;

    await send('msg_1', now, v1('msg_1', now)).expect(200, {});
    // a list with a rotated-out signature first still matches
    await send('msg_2', now, `v1,AAAA ${v1('msg_2', now)}`).expect(200, {});
    const wrong = await send(
      'msg_3',
      now,
      v1('msg_3', now, 'whsec_' + Buffer.alloc(24).toString('base64')),
    ).expect(401);
    expect(wrong.body.error.code).to.equal('invalid_signature');
    // signed for another id or body: refused
    await send('msg_4', now, v1('msg_other', now)).expect(401);
    await send('msg_4b', now, v1('msg_4b', now, signingSecret, JSON.stringify({ event: 'refund' }))).expect(
      401,
    );
    const stale = await send('msg_5', now - 600, v1('msg_5', now - 600)).expect(401);
    expect(stale.body.error.code).to.equal('stale_signature');
    await send('msg_6', now + 600, v1('msg_6', now + 600)).expect(401);
    const unsigned = await execute(org, webhookId).send({ event: 'paid' }).expect(401);
    expect(unsigned.body.error.code).to.equal('invalid_signature');

    // a rotated secret: the old one no longer works, the new one is shown once
    const rotated = await admin()
      .put(org.path(`/webhooks/${webhookId}`), { rotateSigningSecret: true })
      .expect(200);
    const fresh = rotated.body.signingSecret as string;
    expect(fresh)
      .to.match(/^whsec_/)
      .and.not.equal(signingSecret);
    await send('msg_7', now, v1('msg_7', now)).expect(401);
    await send('msg_8', now, v1('msg_8', now, fresh)).expect(200, {});
    // turned off: no signature needed
    await admin()
      .put(org.path(`/webhooks/${webhookId}`), { signatureVerification: false })
      .expect(200);
    await execute(org, webhookId).send({ event: 'paid' }).expect(200, {});
  });

  it('limits deliveries per minute (429 with Retry-After) and the body size (413)', async () => {
    const { webhookId } = await createWebhook({ rateLimitPerMinute: 2 });
    // the window is one clock minute: start just after a minute begins, so the three requests share one
    const msIntoMinute = Date.now() % 60_000;
    if (msIntoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - msIntoMinute + 100));
    await execute(org, webhookId).send({ n: 1 }).expect(200);
    await execute(org, webhookId).send({ n: 2 }).expect(200);
    const limited = await execute(org, webhookId).send({ n: 3 }).expect(429);
    expect(limited.body.error.code).to.equal('rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).to.be.within(1, 60);
    const big = await execute(org, webhookId)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ text: 'x'.repeat(300 * 1024) }))
      .expect(413);
    expect(big.body.error.code).to.equal('payload_too_large');
  });

  it('counts per webhook and clock minute; Retry-After is the seconds left in the minute; without Redis it accepts', async () => {
    const limiter = new WebhookRateLimiter(env.deps.redis, silent);
    const webhookId = `wh_rate_${Date.now()}_${Math.random().toString(36).slice(2)}`;
    const otherWebhookId = `${webhookId}_other`;
    // 12:00:15.250 UTC on a day long past: its counters are this test's alone
    const at = Date.UTC(2020, 0, 2, 12, 0, 15, 250);
    const refusal = async (id: string, now: number) => {
      const err = await limiter.take(id, 2, now).then(
        () => expect.fail('accepted'),
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(TooManyRequestsError);
      return err as TooManyRequestsError;
    };
    await limiter.take(webhookId, 2, at);
    await limiter.take(webhookId, 2, at + 30_000);
    const limited = await refusal(webhookId, at);
    expect([limited.status, limited.code, limited.retryAfterSeconds]).to.deep.equal([
      429,
      'rate_limited',
      45,
    ]);
    expect(limited.message).to.equal('this webhook accepts at most 2 deliveries a minute; retry after 45 s');
    // 12:00:59.999: a second is left to wait, rounded up
    expect((await refusal(webhookId, Date.UTC(2020, 0, 2, 12, 0, 59, 999))).retryAfterSeconds).to.equal(1);
    // another webhook in the same minute, and the same webhook in the next clock minute, start from zero
    await limiter.take(otherWebhookId, 2, at);
    await limiter.take(webhookId, 2, Date.UTC(2020, 0, 2, 12, 1, 0, 0));
    // Redis down: the delivery is accepted
    const unreachable = env.deps.redis.duplicate({ lazyConnect: true, enableOfflineQueue: false });
    try {
      await new WebhookRateLimiter(unreachable, silent).take(webhookId, 2, at);
    } finally {
      unreachable.disconnect();
    }
  });

  it('accepts any JSON and any query parameters; an unknown webhook is 404 whether or not the organization exists', async () => {
    const { webhookId } = await createWebhook();
    await execute(org, webhookId).query({ anything: 'goes', n: '1' }).send([1, 2, 3]).expect(200, {});
    await execute(org, webhookId)
      .set('content-type', 'application/json')
      .send('"just a string"')
      .expect(200, {});
    await execute(org, webhookId).expect(200, {});
    const bad = await execute(org, webhookId)
      .set('content-type', 'application/json')
      .send('{"broken":')
      .expect(400);
    expect(bad.body.error.code).to.equal('invalid_json');
    const unknownHook = await execute(org, 'whk_nope').send({}).expect(404);
    const unknownOrg = await request(env.app)
      .post(`/orgs/org_nope/webhooks/${webhookId}/execute`)
      .send({})
      .expect(404);
    expect(unknownOrg.body).to.deep.equal(unknownHook.body);
    // another organization's path with our webhook id: the same 404
    expect((await execute(other, webhookId).send({}).expect(404)).body).to.deep.equal(unknownHook.body);
  });

  it('is for admins and owners, and never shows or changes another organization’s webhooks', async () => {
    const { webhookId } = await createWebhook();
    const chainId = await createChain();
    const handler = await admin()
      .post(org.path(`/webhooks/${webhookId}/handlers`), {
        handlerType: 'action-chain',
        actionChainId: chainId,
        instructions: 'x',
      })
      .expect(201);
    const handlerId = handler.body.handlerId as string;
    await as(env, org.chat.token).get(org.path('/webhooks')).expect(403);
    await as(env, org.chat.token)
      .get(org.path(`/webhooks/${webhookId}/deliveries`))
      .expect(403);
    await as(env, org.owner.token)
      .get(org.path(`/webhooks/${webhookId}`))
      .expect(200);

    const stranger = as(env, other.admin.token);
    await stranger.get(other.path(`/webhooks/${webhookId}`)).expect(404);
    await stranger.put(other.path(`/webhooks/${webhookId}`), { name: 'x' }).expect(404);
    await stranger.delete(other.path(`/webhooks/${webhookId}`)).expect(404);
    await stranger.get(other.path(`/webhooks/${webhookId}/handlers`)).expect(404);
    await stranger.get(other.path(`/webhooks/${webhookId}/deliveries`)).expect(404);
    await stranger.get(other.path(`/webhooks/${webhookId}/handlers/${handlerId}`)).expect(404);
    await stranger
      .put(other.path(`/webhooks/${webhookId}/handlers/${handlerId}`), { instructions: 'y' })
      .expect(404);
    await stranger.delete(other.path(`/webhooks/${webhookId}/handlers/${handlerId}`)).expect(404);
    await stranger.get(org.path(`/webhooks/${webhookId}`)).expect(401);
    expect((await stranger.get(other.path('/webhooks')).expect(200)).body.items).to.deep.equal([]);
    // their webhook cannot run our chain
    const theirs = await stranger.post(other.path('/webhooks'), { name: 'Theirs' }).expect(201);
    await stranger
      .post(other.path(`/webhooks/${theirs.body.webhookId}/handlers`), {
        handlerType: 'action-chain',
        actionChainId: chainId,
        instructions: 'x',
      })
      .expect(400);
    expect(
      (
        await admin()
          .get(org.path(`/webhooks/${webhookId}/handlers/${handlerId}`))
          .expect(200)
      ).body.instructions,
    ).to.equal('x');
  });
});
