import type { Redis } from 'ioredis';
import { BoundedMap } from '@lib/bounded-map';
import type { Logger } from '@lib/logger';

/** What is cached: documents of one organization (an API key's record, a membership). */
interface Owned {
  organizationId: string;
}

interface Entry {
  value: Owned;
  expiresAt: number;
}

/** Past this many entries the oldest is dropped (a key and a membership per active credential). */
const MAX_ENTRIES = 10_000;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The documents authentication reads on every request (an API key's record, the caller's membership), kept for
 * at most `ttlMs`. Serving from it is safe only while every write to those documents drops them: `invalidate`
 * drops an organization's entries, and `setUsable(false)` (the feed of changes is down) drops everything and
 * stops caching until it is back. A read that started before an invalidation is not kept, so a document read
 * just before a change cannot outlive it. Values are frozen: they are shared by every request that reads them.
 */
export class CredentialCache {
  private readonly entries = new BoundedMap<string, Entry>(MAX_ENTRIES);
  /** Bumped by every invalidation: a read that began under an older one is returned but not kept. */
  private generation = 0;
  private usable = false;

  constructor(
    protected readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async read<T extends Owned>(key: string, load: () => Promise<T | null>): Promise<T | null> {
    const hit = this.entries.get(key);
    if (hit && this.usable && hit.expiresAt > this.now()) return hit.value as T;
    const generation = this.generation;
    const value = await load();
    if (value && this.usable && this.ttlMs > 0 && generation === this.generation) {
      this.entries.set(key, { value: deepFreeze(value), expiresAt: this.now() + this.ttlMs });
    }
    return value;
  }

  /** Whether reads are being served from the cache (changes are heard and the TTL is not 0). */
  get serving(): boolean {
    return this.usable && this.ttlMs > 0;
  }

  /** An organization's API keys or memberships changed: none of its entries may be served again. */
  invalidate(organizationId: string): void {
    this.generation++;
    for (const [key, entry] of this.entries) {
      if (entry.value.organizationId === organizationId) this.entries.delete(key);
    }
  }

  /** Whether changes are being heard; while they are not, nothing is served from or kept in the cache. */
  setUsable(usable: boolean): void {
    this.generation++;
    this.usable = usable;
    this.entries.clear();
  }
}

/** The Redis channel on which every process announces a change to an organization's credentials. */
export const CREDENTIALS_CHANGED_CHANNEL = 'credentials-changed';

/**
 * The credential cache of a process that shares its database with other replicas. A change made here drops this
 * process's entries at once and is published to every other process, whose subscriber drops theirs. The cache
 * serves only while the subscription is up: a dropped connection (a change it could miss) empties it and stops it
 * until the subscription is back. The subscriber connects on the first read, so a process that never
 * authenticates (the worker) holds no subscription.
 */
export class SharedCredentialCache extends CredentialCache {
  private static instances = 0;
  /** The subscriber's Redis client name (CLIENT LIST), unique per cache, for operators and tests. */
  readonly connectionName = `credential-changes-${process.pid}-${++SharedCredentialCache.instances}`;
  private subscriber?: Redis;
  private closed = false;

  constructor(
    private readonly redis: Redis,
    ttlMs: number,
    private readonly logger: Logger,
  ) {
    super(ttlMs);
  }

  override read<T extends Owned>(key: string, load: () => Promise<T | null>): Promise<T | null> {
    if (!this.subscriber && !this.closed && this.ttlMs > 0) this.subscribe();
    return super.read(key, load);
  }

  /** After a write to an organization's API keys or memberships: here at once, elsewhere through Redis. */
  async changed(organizationId: string): Promise<void> {
    this.invalidate(organizationId);
    try {
      await this.redis.publish(CREDENTIALS_CHANGED_CHANNEL, organizationId);
    } catch (err) {
      // The write stands; other replicas' entries expire within the TTL (their subscribers, on the same Redis,
      // have most likely lost their connection too, which empties their caches).
      this.logger.warn(
        { err, organizationId },
        'credential change not published; other replicas catch up within the cache TTL',
      );
    }
  }

  private subscribe(): void {
    const sub = this.redis.duplicate({
      lazyConnect: false,
      autoResubscribe: false,
      connectionName: this.connectionName,
      // A subscriber waits for messages by design: no command deadline (a subscription that failed on one would
      // leave the cache unused until the next reconnect).
      commandTimeout: undefined,
    });
    this.subscriber = sub;
    sub.on('error', (err: Error) => this.logger.warn({ err }, 'credential change subscriber error'));
    sub.on('message', (_channel: string, organizationId: string) => this.invalidate(organizationId));
    sub.on('close', () => this.setUsable(false));
    sub.on('ready', () => {
      sub.subscribe(CREDENTIALS_CHANGED_CHANNEL).then(
        () => this.setUsable(this.subscriber === sub && sub.status === 'ready'),
        (err: unknown) => this.logger.warn({ err }, 'credential change subscription failed'),
      );
    });
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.closed = true;
    this.subscriber = undefined;
    this.setUsable(false);
    if (sub) await sub.quit().catch(() => sub.disconnect());
  }
}
