import type { Redis } from 'ioredis';
import { Gauge, type Registry } from 'prom-client';
import { ADMISSION_KEY } from './reconcile';

/**
 * The backlog of each organization and kind, read from the admission sets when /metrics is scraped: how many
 * executions are unfinished, and how long the oldest of them has been (seconds). Only organizations with
 * unfinished work have series (an empty set is gone from Redis).
 */
export function registerAdmissionGauges(registry: Registry, redis: Redis) {
  const labelNames = ['organization_id', 'kind'] as const;
  // Both are set when the first is collected (a registry collects in the order metrics were registered).
  const oldestAge = new Gauge({
    name: 'admission_oldest_age_seconds',
    help: 'Age of the oldest unfinished background execution, by organization and kind',
    labelNames,
    registers: [],
  });
  new Gauge({
    name: 'admission_backlog',
    help: 'Unfinished background executions counted against the bound, by organization and kind',
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      oldestAge.reset();
      const now = Date.now();
      for await (const keys of redis.scanStream({ match: 'admission:{*}:*', count: 500 }) as AsyncIterable<
        string[]
      >) {
        for (const key of keys) {
          const [, organizationId, kind] = ADMISSION_KEY.exec(key) ?? [];
          if (!organizationId || !kind) continue;
          const [count, oldest] = await Promise.all([
            redis.zcard(key),
            redis.zrange(key, 0, 0, 'WITHSCORES'),
          ]);
          const labels = { organization_id: organizationId, kind };
          this.set(labels, count);
          if (oldest[1]) oldestAge.set(labels, (now - Number(oldest[1])) / 1000);
        }
      }
    },
  });
  registry.registerMetric(oldestAge);
}
