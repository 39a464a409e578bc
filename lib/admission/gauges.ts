import type { Redis } from 'ioredis';
import { Gauge, type Registry } from 'prom-client';
import { ADMISSION_KEY } from './reconcile';

interface Backlog {
  labels: { organization_id: string; kind: string };
  count: number;
  /** seconds since the oldest unfinished execution was admitted */
  oldestAge?: number;
}

/** Every organization's and kind's backlog, from the admission sets (an empty set is gone from Redis). */
async function readBacklogs(redis: Redis): Promise<Backlog[]> {
  const now = Date.now();
  const backlogs: Backlog[] = [];
  for await (const keys of redis.scanStream({ match: 'admission:{*}:*', count: 500 }) as AsyncIterable<
    string[]
  >) {
    for (const key of keys) {
      const [, organizationId, kind] = ADMISSION_KEY.exec(key) ?? [];
      if (!organizationId || !kind) continue;
      const [count, oldest] = await Promise.all([redis.zcard(key), redis.zrange(key, 0, 0, 'WITHSCORES')]);
      backlogs.push({
        labels: { organization_id: organizationId, kind },
        count,
        oldestAge: oldest[1] ? (now - Number(oldest[1])) / 1000 : undefined,
      });
    }
  }
  return backlogs;
}

/**
 * The backlog of each organization and kind, read from Redis when /metrics is scraped: how many executions are
 * unfinished, and how long the oldest of them has been. Only organizations with unfinished work have series. A
 * registry collects its metrics at once: both gauges share one read per scrape.
 */
export function registerAdmissionGauges(registry: Registry, redis: Redis) {
  let reading: Promise<Backlog[]> | undefined;
  const backlogs = () => {
    reading ??= readBacklogs(redis).finally(() => setTimeout(() => (reading = undefined), 1000).unref());
    return reading;
  };
  const labelNames = ['organization_id', 'kind'] as const;
  new Gauge({
    name: 'admission_backlog',
    help: 'Unfinished executions (background work, turns) counted against the bound, by organization and kind',
    labelNames,
    registers: [registry],
    async collect() {
      const read = await backlogs();
      this.reset();
      for (const b of read) this.set(b.labels, b.count);
    },
  });
  new Gauge({
    name: 'admission_oldest_age_seconds',
    help: 'Age of the oldest unfinished execution (background work, turns), by organization and kind',
    labelNames,
    registers: [registry],
    async collect() {
      const read = await backlogs();
      this.reset();
      for (const b of read) if (b.oldestAge !== undefined) this.set(b.labels, b.oldestAge);
    },
  });
}
