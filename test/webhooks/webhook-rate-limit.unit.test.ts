/* eslint-disable @typescript-eslint/require-await -- an in-memory Redis answers at once */
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { WebhookRateLimiter } from '@lib/webhooks/rate-limit';

/*
 * The per-webhook rate limit (docs/webhooks.md "Limits"): at most N accepted deliveries per webhook and clock
 * minute, counted in Redis across API replicas; over it `429 rate_limited` with `Retry-After` (the seconds left in
 * the minute); when Redis is down deliveries are accepted.
 */

/** The MULTI / INCR / EXPIRE / EXEC that the limiter sends, over a map; `down` makes EXEC fail. */
class FakeRedis {
  readonly counts = new Map<string, number>();
  readonly ttls = new Map<string, number>();
  down = false;
  answerNull = false;
  multi() {
    const ops: Array<() => [null, number]> = [];
    const tx = {
      incr: (key: string) => {
        ops.push(() => {
          const n = (this.counts.get(key) ?? 0) + 1;
          this.counts.set(key, n);
          return [null, n];
        });
        return tx;
      },
      expire: (key: string, seconds: number) => {
        ops.push(() => {
          this.ttls.set(key, seconds);
          return [null, 1];
        });
        return tx;
      },
      exec: async () => {
        if (this.down) throw new Error('connect ECONNREFUSED');
        const replies = ops.map((op) => op());
        return this.answerNull ? null : replies;
      },
    };
    return tx;
  }
}

// 2026-01-01T10:00:15.250Z: 15.25 s into a clock minute
const MINUTE = Date.UTC(2026, 0, 1, 10, 0, 0);
const AT = MINUTE + 15_250;

describe('webhook rate limit', () => {
  let redis: FakeRedis;
  let warnings: string[];
  let warnedWith: object[];
  let limiter: WebhookRateLimiter;
  beforeEach(() => {
    redis = new FakeRedis();
    warnings = [];
    warnedWith = [];
    const logger = {
      warn: (o: object, msg: string) => {
        warnedWith.push(o);
        warnings.push(msg);
      },
    };
    limiter = new WebhookRateLimiter(redis as unknown as Redis, logger as never);
  });

  async function refusal(call: Promise<void>) {
    try {
      await call;
    } catch (err) {
      const e = err as { status: number; code: string; message: string; retryAfterSeconds: number };
      return { status: e.status, code: e.code, message: e.message, retryAfterSeconds: e.retryAfterSeconds };
    }
    throw new Error('accepted');
  }

  it('accepts exactly the limit in a minute and refuses the next with 429 and the seconds left', async () => {
    for (let i = 0; i < 3; i++) await limiter.take('whk_1', 3, AT);
    expect(await refusal(limiter.take('whk_1', 3, AT))).to.deep.equal({
      status: 429,
      code: 'rate_limited',
      message: 'this webhook accepts at most 3 deliveries a minute; retry after 45 s',
      retryAfterSeconds: 45,
    });
  });

  it('rounds the seconds left up: 1 at the last millisecond of a minute, 60 at its first', async () => {
    await limiter.take('whk_1', 1, MINUTE + 59_999);
    expect((await refusal(limiter.take('whk_1', 1, MINUTE + 59_999))).retryAfterSeconds).to.equal(1);
    const next = MINUTE + 60_000;
    await limiter.take('whk_1', 1, next);
    expect((await refusal(limiter.take('whk_1', 1, next))).retryAfterSeconds).to.equal(60);
  });

  it('starts counting again in the next clock minute', async () => {
    await limiter.take('whk_1', 1, AT);
    await refusal(limiter.take('whk_1', 1, MINUTE + 59_999));
    await limiter.take('whk_1', 1, MINUTE + 60_000);
  });

  it('counts each webhook on its own', async () => {
    await limiter.take('whk_1', 1, AT);
    await limiter.take('whk_2', 1, AT);
    expect((await refusal(limiter.take('whk_2', 1, AT))).status).to.equal(429);
  });

  it('shares the count between API replicas over the same Redis', async () => {
    const other = new WebhookRateLimiter(redis as unknown as Redis, { warn: () => {} } as never);
    await limiter.take('whk_1', 2, AT);
    await other.take('whk_1', 2, AT);
    expect((await refusal(other.take('whk_1', 2, AT))).status).to.equal(429);
  });

  it("lets a minute's counter expire only after that minute is over", async () => {
    await limiter.take('whk_1', 5, AT);
    const ttls = [...redis.ttls.values()];
    expect(ttls).to.have.length(1);
    expect(ttls[0]).to.be.at.least(60);
  });

  it('accepts, with a warning, when Redis cannot be reached', async () => {
    redis.down = true;
    for (let i = 0; i < 3; i++) await limiter.take('whk_1', 1, AT);
    expect(warnings).to.deep.equal(Array(3).fill('webhook rate limit not checked: redis unavailable'));
    // an operator reading the warning needs the cause and the webhook it spared
    expect(warnedWith[0]).to.deep.include({ webhookId: 'whk_1' });
    expect((warnedWith[0] as { err: Error }).err.message).to.equal('connect ECONNREFUSED');
  });

  it('accepts when Redis answers the transaction with nothing', async () => {
    redis.answerNull = true;
    await limiter.take('whk_1', 1, AT);
    await limiter.take('whk_1', 1, AT);
    expect(warnings).to.deep.equal([]);
  });
});
