import type { Redis } from 'ioredis';
import { TooManyRequestsError } from '@lib/errors';
import type { Logger } from '@lib/logger';

/**
 * Accepted deliveries per webhook and minute, counted in Redis (shared by every API replica) in fixed one-minute
 * windows. A delivery over the limit is 429 with `Retry-After` (the seconds left in the window). When Redis cannot
 * be reached the delivery is accepted: losing a sender's event is worse than letting a burst through.
 */
export class WebhookRateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  async take(webhookId: string, perMinute: number, now = Date.now()): Promise<void> {
    const window = Math.floor(now / 60_000);
    const key = `webhook-rate:${webhookId}:${window}`;
    let count: number;
    try {
      const res = await this.redis.multi().incr(key).expire(key, 120).exec();
      count = Number(res?.[0]?.[1] ?? 0);
    } catch (err) {
      this.logger.warn({ err, webhookId }, 'webhook rate limit not checked: redis unavailable');
      return;
    }
    if (count > perMinute) {
      const retryAfter = Math.max(1, Math.ceil(((window + 1) * 60_000 - now) / 1000));
      throw new TooManyRequestsError(
        `this webhook accepts at most ${perMinute} deliveries a minute; retry after ${retryAfter} s`,
        retryAfter,
        'rate_limited',
      );
    }
  }
}
