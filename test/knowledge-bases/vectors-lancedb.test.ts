import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { expect } from 'chai';
import { vectorId } from '@lib/vectors/ids';
import { COMPACT_AFTER_WRITES, LanceVectorStore } from '@lib/vectors/lancedb';
import { tableName } from '@lib/vectors/lancedb-schema';
import type { EmbeddingModelRef, VectorRecord } from '@lib/vectors/vector-store';

const MODEL: EmbeddingModelRef = { id: 'test:lance', dimensions: 16 };

/** A deterministic pseudo-random unit vector (xorshift), so a failure can be replayed. */
function unit(seed: number): number[] {
  let x = seed * 2654435761 + 1;
  const v = Array.from({ length: MODEL.dimensions }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) / 0xffffffff) * 2 - 1;
  });
  const n = Math.hypot(...v);
  return v.map((a) => a / n);
}

const rec = (kb: string, file: string, i: number, seed = i): VectorRecord => ({
  id: vectorId(kb, file, i),
  values: unit(seed),
  metadata: { knowledgeBaseId: kb, fileId: file, chunkId: `c${i}` },
});

describe('LanceDB vector store: index and concurrency', function () {
  this.timeout(120_000);
  let dir: string;
  let store: LanceVectorStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'vectors-lance-'));
    store = new LanceVectorStore(dir, { threshold: 600, reindexAfter: 200, nprobes: 4 });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const indexNames = async () => {
    const db = await connect(dir);
    const table = await db.openTable(tableName(MODEL));
    return (await table.listIndices()).map((i) => i.name);
  };

  for (const kind of ['ivf_hnsw_sq', 'ivf_flat', 'ivf_pq'] as const) {
    it(`scans below the threshold and builds an ${kind} index past it; a narrow filter still fills topK`, async () => {
      store = new LanceVectorStore(dir, { kind, threshold: 600, reindexAfter: 200, nprobes: 4 });
      await store.upsert(
        MODEL,
        'org',
        Array.from({ length: 500 }, (_, i) => rec('kb', `f${i % 50}`, i)),
      );
      await store.maintain(MODEL);
      expect(await indexNames()).not.to.include('vector_idx');
      await store.upsert(
        MODEL,
        'org',
        Array.from({ length: 500 }, (_, i) => rec('kb', `f${i % 50}`, 500 + i)),
      );
      await store.maintain(MODEL);
      expect(await indexNames()).to.include('vector_idx');

      const hit = await store.query(MODEL, 'org', { vector: unit(123), topK: 3, knowledgeBaseIds: ['kb'] });
      expect(hit[0]!.id).to.equal(vectorId('kb', 'f23', 123));
      expect(hit[0]!.score).to.be.closeTo(1, 1e-4);
      // One file's 20 vectors are spread over the index: the IVF kinds' 4 probes alone find 2 or 3 of them, and
      // the store then scans the file's rows exactly.
      const file = await store.query(MODEL, 'org', {
        vector: unit(7),
        topK: 20,
        knowledgeBaseIds: ['kb'],
        fileIds: ['f7'],
      });
      expect(file).to.have.length(20);
      expect(new Set(file.map((m) => m.metadata.fileId))).to.deep.equal(new Set(['f7']));
    });
  }

  it('folds rows added after the index into it, and still finds them', async () => {
    await store.upsert(
      MODEL,
      'org',
      Array.from({ length: 700 }, (_, i) => rec('kb', 'old', i)),
    );
    await store.maintain(MODEL);
    await store.upsert(
      MODEL,
      'org',
      Array.from({ length: 300 }, (_, i) => rec('kb', 'new', i, 10_000 + i)),
    );
    await store.maintain(MODEL);
    const db = await connect(dir);
    const stats = await (await db.openTable(tableName(MODEL))).indexStats('vector_idx');
    expect(stats?.numUnindexedRows).to.equal(0);
    const hit = await store.query(MODEL, 'org', { vector: unit(10_050), topK: 1, knowledgeBaseIds: ['kb'] });
    expect(hit[0]!.id).to.equal(vectorId('kb', 'new', 50));
  });

  it('rebuilds the index as one when delta indices pile up, and finds rows of every generation', async () => {
    store = new LanceVectorStore(dir, { threshold: 600, reindexAfter: 100, maxDeltas: 2 });
    const stats = async () =>
      (await (await connect(dir)).openTable(tableName(MODEL))).indexStats('vector_idx');
    await store.upsert(
      MODEL,
      'org',
      Array.from({ length: 600 }, (_, i) => rec('kb', 'base', i)),
    );
    await store.maintain(MODEL);
    const counts: number[] = [];
    for (let round = 0; round < 4; round++) {
      await store.upsert(
        MODEL,
        'org',
        Array.from({ length: 100 }, (_, i) => rec('kb', `r${round}`, i, 1000 * (round + 1) + i)),
      );
      await store.maintain(MODEL);
      counts.push((await stats())!.numIndices!);
    }
    // a delta per fold (2, then 3), the rebuild folds them into one, then a delta again
    expect(counts).to.deep.equal([2, 3, 1, 2]);
    expect((await stats())!.numUnindexedRows).to.equal(0);
    for (let round = 0; round < 4; round++) {
      const seed = 1000 * (round + 1) + 42;
      const hit = await store.query(MODEL, 'org', { vector: unit(seed), topK: 1, knowledgeBaseIds: ['kb'] });
      expect(hit[0]!.id).to.equal(vectorId('kb', `r${round}`, 42));
    }
  });

  it('shows another connection (the API process is one) what the writer stored after it looked', async () => {
    const reader = new LanceVectorStore(dir);
    expect(await reader.countFile(MODEL, 'org', 'kb', 'f')).to.equal(0);
    await store.upsert(MODEL, 'org', [rec('kb', 'f', 0)]);
    expect(await reader.countFile(MODEL, 'org', 'kb', 'f')).to.equal(1);
    await store.upsert(MODEL, 'org', [rec('kb', 'f', 1), rec('kb', 'f', 2)]);
    await store.deleteFile(MODEL, 'org', 'kb', 'g');
    expect(await reader.countFile(MODEL, 'org', 'kb', 'f')).to.equal(3);
    const hit = await reader.query(MODEL, 'org', { vector: unit(2), topK: 1, knowledgeBaseIds: ['kb'] });
    expect(hit[0]!.id).to.equal(vectorId('kb', 'f', 2));
    await reader.close();
  });

  it('takes many concurrent upserts to one table, overlapping ids included, without loss or duplicates', async () => {
    const kb = `kb${randomBytes(3).toString('hex')}`;
    // 20 callers at once, as the worker's concurrent activities do; every id is written by two of them.
    await Promise.all(
      Array.from({ length: 20 }, (_, c) =>
        store.upsert(
          MODEL,
          'org',
          Array.from({ length: 50 }, (_, i) => rec(kb, 'f', (c % 10) * 50 + i)),
        ),
      ),
    );
    expect(await store.countFile(MODEL, 'org', kb, 'f')).to.equal(500);
  });

  // Each small write (a file's chunks) is a fragment and a version; without compaction every read and write went
  // over all of them, and LanceDB's metadata cache kept every version's manifest (the worker's growth in the soak).
  it(`compacts a table below the index threshold every ${COMPACT_AFTER_WRITES} writes, deletes included`, async () => {
    const writes = COMPACT_AFTER_WRITES * 3;
    for (let i = 0; i < writes - 1; i++) await store.upsert(MODEL, 'org', [rec('kb', `f${i}`, 0, i)]);
    await store.deleteFile(MODEL, 'org', 'kb', 'f0');
    await store.close(); // after the compactions queued behind the writes
    const table = await (await connect(dir)).openTable(tableName(MODEL));
    const stats = await table.stats();
    expect(stats.numRows).to.equal(writes - 2);
    expect(stats.fragmentStats.numFragments).to.equal(1);
  });

  it('keeps the LanceDB caches within the bounds it was given', async () => {
    // Many small writes, each read after: LanceDB caches each version's manifest, file metadata and deletions.
    const WRITES = 120;
    const fill = async (caches: { indexCacheMb: number; metadataCacheMb: number }) => {
      const where = mkdtempSync(join(tmpdir(), 'vectors-lance-cache-'));
      const s = new LanceVectorStore(where, { threshold: 100_000 }, caches);
      try {
        for (let i = 0; i < WRITES; i++) {
          await s.upsert(
            MODEL,
            'org',
            Array.from({ length: 5 }, (_, j) => rec('kb', `f${i}`, j, i * 5 + j)),
          );
          await s.query(MODEL, 'org', { vector: unit(i), topK: 5, knowledgeBaseIds: ['kb'] });
        }
        return s.cacheBytes();
      } finally {
        await s.close();
        rmSync(where, { recursive: true, force: true });
      }
    };
    const unbounded = await fill({ indexCacheMb: 256, metadataCacheMb: 64 });
    const bounded = await fill({ indexCacheMb: 1, metadataCacheMb: 1 });
    // The same writes fill more than the bound when given room (so this test can fail), and stay within it.
    expect(unbounded).to.be.above(1.5 * 2 ** 20);
    expect(bounded).to.be.at.most(1.5 * 2 ** 20);
  });
});
