import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { CredentialCache, SharedCredentialCache } from '@lib/auth/credential-cache';
import { createLogger } from '@lib/logger';

const TTL = 10_000;

/** A cache on a clock the test moves, already hearing changes (usable), and a loader that counts its reads. */
function setup() {
  let now = 1_000_000;
  const cache = new CredentialCache(TTL, () => now);
  cache.setUsable(true);
  const reads: string[] = [];
  const load =
    (key: string, organizationId = 'org_a', role = 'admin') =>
    () => {
      reads.push(key);
      return Promise.resolve({ organizationId, role });
    };
  return { cache, reads, load, advance: (ms: number) => (now += ms) };
}

describe('credential cache', () => {
  it('serves a document it read until the TTL has passed, then reads it again', async () => {
    const { cache, reads, load, advance } = setup();
    await cache.read('k', load('k'));
    await cache.read('k', load('k'));
    advance(TTL - 1);
    await cache.read('k', load('k'));
    expect(reads).to.have.length(1);
    advance(1);
    await cache.read('k', load('k'));
    expect(reads).to.have.length(2);
  });

  it('keeps nothing until changes are heard, and drops everything when they no longer are', async () => {
    const cache = new CredentialCache(TTL);
    let reads = 0;
    const load = () => {
      reads++;
      return Promise.resolve({ organizationId: 'org_a' });
    };
    await cache.read('k', load);
    await cache.read('k', load);
    expect(reads, 'not usable yet').to.equal(2);
    cache.setUsable(true);
    await cache.read('k', load);
    await cache.read('k', load);
    expect(reads).to.equal(3);
    cache.setUsable(false);
    await cache.read('k', load);
    expect(reads, 'dropped when unusable').to.equal(4);
    cache.setUsable(true);
    await cache.read('k', load);
    expect(reads, 'nothing survives a period of not hearing changes').to.equal(5);
  });

  it("drops one organization's documents on a change, and only its", async () => {
    const { cache, reads, load } = setup();
    await cache.read('a1', load('a1', 'org_a'));
    await cache.read('a2', load('a2', 'org_a'));
    await cache.read('b1', load('b1', 'org_b'));
    cache.invalidate('org_a');
    for (const key of ['a1', 'a2', 'b1']) await cache.read(key, load(key, key === 'b1' ? 'org_b' : 'org_a'));
    expect(reads).to.deep.equal(['a1', 'a2', 'b1', 'a1', 'a2']);
  });

  it('does not keep a document whose read began before a change', async () => {
    const { cache, reads } = setup();
    type Doc = { organizationId: string; role: string };
    let finish!: (doc: Doc) => void;
    const inFlight = cache.read('k', () => {
      reads.push('slow');
      return new Promise<Doc>((resolve) => (finish = resolve));
    });
    cache.invalidate('org_a');
    finish({ organizationId: 'org_a', role: 'admin' });
    expect(await inFlight, 'the reader still gets what it read').to.deep.equal({
      organizationId: 'org_a',
      role: 'admin',
    });
    const after = await cache.read('k', () => {
      reads.push('fresh');
      return Promise.resolve({ organizationId: 'org_a', role: 'chat' });
    });
    expect(after?.role).to.equal('chat');
    expect(reads).to.deep.equal(['slow', 'fresh']);
  });

  it('keeps no miss: a document that appears later is found at once', async () => {
    const { cache } = setup();
    let stored: { organizationId: string } | null = null;
    expect(await cache.read('k', () => Promise.resolve(stored))).to.equal(null);
    stored = { organizationId: 'org_a' };
    expect(await cache.read('k', () => Promise.resolve(stored))).to.deep.equal(stored);
  });

  it('shares frozen documents, so no request can change what the next one reads', async () => {
    const { cache } = setup();
    const doc = await cache.read('k', () =>
      Promise.resolve({ organizationId: 'org_a', permissions: { tables: { write: false } } }),
    );
    expect(() => {
      doc!.permissions.tables.write = true;
    }).to.throw(TypeError);
  });

  it('holds at most 10,000 documents, dropping the oldest first', async () => {
    const { cache, reads, load } = setup();
    for (let i = 0; i <= 10_000; i++) await cache.read(`k${i}`, load(`k${i}`));
    reads.length = 0;
    await cache.read('k10000', load('k10000'));
    await cache.read('k1', load('k1'));
    expect(reads, 'the newest is kept, the second oldest too').to.deep.equal([]);
    await cache.read('k0', load('k0'));
    expect(reads).to.deep.equal(['k0']);
  });

  it('with a TTL of 0, reads every time', async () => {
    let reads = 0;
    const cache = new CredentialCache(0);
    cache.setUsable(true);
    for (let i = 0; i < 3; i++)
      await cache.read('k', () => {
        reads++;
        return Promise.resolve({ organizationId: 'org_a' });
      });
    expect(reads).to.equal(3);
  });
});

describe('shared credential cache', () => {
  it('drops a change made in this process at once, even when Redis cannot take the announcement', async () => {
    const subscriber = Object.assign(new EventEmitter(), {
      status: 'ready',
      subscribe: () => Promise.resolve(1),
      quit: () => Promise.resolve('OK'),
    });
    const published: string[] = [];
    const redis = {
      duplicate: () => subscriber,
      publish: (_channel: string, organizationId: string) => {
        published.push(organizationId);
        return Promise.reject(new Error('connection is closed'));
      },
    } as unknown as Redis;
    const cache = new SharedCredentialCache(redis, TTL, createLogger('silent'));
    let reads = 0;
    const read = () =>
      cache.read('key:k', () => {
        reads++;
        return Promise.resolve({ organizationId: 'org_a' });
      });
    await read();
    subscriber.emit('ready');
    await new Promise((resolve) => setImmediate(resolve));
    expect(cache.serving).to.equal(true);
    await read();
    await read();
    expect(reads).to.equal(2);
    await cache.changed('org_a');
    expect(published).to.deep.equal(['org_a']);
    await read();
    expect(reads).to.equal(3);
    await cache.close();
  });
});
