import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createVectorStore } from '@lib/vectors/create-vector-store';
import { vectorId } from '@lib/vectors/ids';
import type { EmbeddingModelRef, VectorRecord, VectorStore } from '@lib/vectors/vector-store';
import { FakePinecone } from '@test/helpers/fake-pinecone';

// Two models of different sizes: vectors of one must never be seen through the other.
const MODEL: EmbeddingModelRef = { id: 'test:model-a', dimensions: 8 };
const OTHER_MODEL: EmbeddingModelRef = { id: 'test:model-b', dimensions: 12 };

interface Adapter {
  name: string;
  start(): Promise<{ store: VectorStore; stop: () => Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: 'LanceDB on a temp folder',
    start() {
      const dir = mkdtempSync(join(tmpdir(), 'vectors-contract-'));
      const store = createVectorStore({ kind: 'lancedb', dir });
      return Promise.resolve({
        store,
        stop: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      });
    },
  },
  {
    name: 'Pinecone (SDK against a fake data plane)',
    async start() {
      const fake = await FakePinecone.start({ 'kb-a': { dimension: 8 }, 'kb-b': { dimension: 12 } });
      const store = createVectorStore({
        kind: 'pinecone',
        apiKey: fake.apiKey,
        indexes: {
          [MODEL.id]: { name: 'kb-a', host: fake.index('kb-a').host },
          [OTHER_MODEL.id]: { name: 'kb-b', host: fake.index('kb-b').host },
        },
      });
      return {
        store,
        stop: async () => {
          await store.close();
          await fake.close();
        },
      };
    },
  },
];

/** Unit vector along axis i (plus axis j when given, at 45°). */
function axis(dimensions: number, i: number, j?: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  v[i] = 1;
  if (j !== undefined) v[j] = 1;
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

function record(kb: string, file: string, chunk: number, values: number[]): VectorRecord {
  return {
    id: vectorId(kb, file, chunk),
    values,
    metadata: { knowledgeBaseId: kb, fileId: file, chunkId: `chunk-${kb}-${file}-${chunk}` },
  };
}

const uid = (p: string) => `${p}${randomBytes(4).toString('hex')}`;

for (const adapter of adapters) {
  describe(`VectorStore contract: ${adapter.name}`, function () {
    this.timeout(120_000);
    let store: VectorStore;
    let stop: () => Promise<void>;
    let org: string;

    before(async () => ({ store, stop } = await adapter.start()));
    after(() => stop());
    // Every test its own organization (namespace), as every test of the service creates its own.
    beforeEach(() => (org = uid('org')));

    it('returns the closest vectors first with cosine similarity as the score', async () => {
      const kb = uid('kb');
      await store.upsert(MODEL, org, [
        record(kb, 'f', 0, axis(8, 1)),
        record(kb, 'f', 1, axis(8, 0)),
        record(kb, 'f', 2, axis(8, 0, 1)),
        record(
          kb,
          'f',
          3,
          axis(8, 0).map((x) => -x),
        ),
      ]);
      const matches = await store.query(MODEL, org, { vector: axis(8, 0), topK: 3, knowledgeBaseIds: [kb] });
      expect(matches.map((m) => m.id)).to.deep.equal([
        vectorId(kb, 'f', 1),
        vectorId(kb, 'f', 2),
        vectorId(kb, 'f', 0),
      ]);
      [1, Math.SQRT1_2, 0].forEach((s, i) => expect(matches[i]!.score).to.be.closeTo(s, 1e-5));
      expect(matches[0]!.metadata).to.deep.equal({
        knowledgeBaseId: kb,
        fileId: 'f',
        chunkId: `chunk-${kb}-f-1`,
      });
    });

    it('filters by knowledge base and by file', async () => {
      const [kb1, kb2] = [uid('kb'), uid('kb')];
      await store.upsert(MODEL, org, [
        record(kb1, 'f1', 0, axis(8, 0)),
        record(kb1, 'f2', 0, axis(8, 0, 1)),
        record(kb2, 'f3', 0, axis(8, 0, 2)),
      ]);
      const ids = async (q: { knowledgeBaseIds: string[]; fileIds?: string[] }) =>
        (await store.query(MODEL, org, { vector: axis(8, 0), topK: 10, ...q })).map((m) => m.id).sort();
      expect(await ids({ knowledgeBaseIds: [kb1] })).to.deep.equal(
        [vectorId(kb1, 'f1', 0), vectorId(kb1, 'f2', 0)].sort(),
      );
      expect(await ids({ knowledgeBaseIds: [kb2] })).to.deep.equal([vectorId(kb2, 'f3', 0)]);
      expect(await ids({ knowledgeBaseIds: [kb1, kb2] })).to.have.length(3);
      expect(await ids({ knowledgeBaseIds: [kb1], fileIds: ['f2'] })).to.deep.equal([vectorId(kb1, 'f2', 0)]);
      // a file of another knowledge base is not reachable through kb1
      expect(await ids({ knowledgeBaseIds: [kb1], fileIds: ['f3'] })).to.deep.equal([]);
      expect(await ids({ knowledgeBaseIds: [uid('kb')] })).to.deep.equal([]);
    });

    it('replaces a vector upserted again under its id, without a duplicate', async () => {
      const kb = uid('kb');
      await store.upsert(MODEL, org, [record(kb, 'f', 0, axis(8, 0)), record(kb, 'f', 1, axis(8, 2))]);
      const replaced = {
        ...record(kb, 'f', 0, axis(8, 1)),
        metadata: { knowledgeBaseId: kb, fileId: 'f', chunkId: 'new' },
      };
      await store.upsert(MODEL, org, [replaced]);
      expect(await store.countFile(MODEL, org, kb, 'f')).to.equal(2);
      const matches = await store.query(MODEL, org, { vector: axis(8, 1), topK: 10, knowledgeBaseIds: [kb] });
      expect(matches.map((m) => m.id)).to.deep.equal([vectorId(kb, 'f', 0), vectorId(kb, 'f', 1)]);
      expect(matches[0]!.score).to.be.closeTo(1, 1e-5);
      expect(matches[0]!.metadata.chunkId).to.equal('new');
    });

    it('keeps organizations (namespaces) apart', async () => {
      const other = uid('org');
      const kb = uid('kb');
      await store.upsert(MODEL, org, [record(kb, 'f', 0, axis(8, 0))]);
      await store.upsert(MODEL, other, [record(kb, 'f', 0, axis(8, 3)), record(kb, 'f', 1, axis(8, 4))]);
      const mine = await store.query(MODEL, org, { vector: axis(8, 3), topK: 10, knowledgeBaseIds: [kb] });
      expect(mine.map((m) => m.id)).to.deep.equal([vectorId(kb, 'f', 0)]);
      expect(mine[0]!.score).to.be.closeTo(0, 1e-5);
      expect(await store.countFile(MODEL, other, kb, 'f')).to.equal(2);
      await store.deleteKnowledgeBase(MODEL, org, kb);
      expect(await store.countFile(MODEL, org, kb, 'f')).to.equal(0);
      expect(await store.countFile(MODEL, other, kb, 'f')).to.equal(2);
    });

    it('keeps embedding models apart', async () => {
      const kb = uid('kb');
      await store.upsert(MODEL, org, [record(kb, 'f', 0, axis(8, 0))]);
      await store.upsert(OTHER_MODEL, org, [
        record(kb, 'f', 0, axis(12, 11)),
        record(kb, 'f', 1, axis(12, 10)),
      ]);
      expect(await store.countFile(MODEL, org, kb, 'f')).to.equal(1);
      expect(await store.countFile(OTHER_MODEL, org, kb, 'f')).to.equal(2);
      const other = await store.query(OTHER_MODEL, org, {
        vector: axis(12, 11),
        topK: 1,
        knowledgeBaseIds: [kb],
      });
      expect(other[0]!.score).to.be.closeTo(1, 1e-5);
      await store.deleteFile(MODEL, org, kb, 'f');
      expect(await store.countFile(OTHER_MODEL, org, kb, 'f')).to.equal(2);
    });

    it('deletes a file, then a knowledge base, idempotently, and counts what is left', async () => {
      const [kb1, kb2] = [uid('kb'), uid('kb')];
      const many = (kb: string, file: string, n: number) =>
        Array.from({ length: n }, (_, i) => record(kb, file, i, axis(8, i % 8, (i + 1) % 8)));
      await store.upsert(MODEL, org, [...many(kb1, 'f1', 5), ...many(kb1, 'f2', 3), ...many(kb2, 'f1', 4)]);
      expect(await store.countFile(MODEL, org, kb1, 'f1')).to.equal(5);
      await store.deleteFile(MODEL, org, kb1, 'f1');
      await store.deleteFile(MODEL, org, kb1, 'f1');
      expect(await store.countFile(MODEL, org, kb1, 'f1')).to.equal(0);
      expect(await store.countFile(MODEL, org, kb1, 'f2')).to.equal(3);
      // the same file id in another knowledge base is another file
      expect(await store.countFile(MODEL, org, kb2, 'f1')).to.equal(4);
      await store.deleteKnowledgeBase(MODEL, org, kb1);
      await store.deleteKnowledgeBase(MODEL, org, kb1);
      expect(await store.countFile(MODEL, org, kb1, 'f2')).to.equal(0);
      expect(await store.countFile(MODEL, org, kb2, 'f1')).to.equal(4);
      const left = await store.query(MODEL, org, {
        vector: axis(8, 0),
        topK: 20,
        knowledgeBaseIds: [kb1, kb2],
      });
      expect(left.map((m) => m.metadata.knowledgeBaseId)).to.deep.equal([kb2, kb2, kb2, kb2]);
    });

    it('stores, counts and deletes a file of more vectors than one request carries', async () => {
      const kb = uid('kb');
      const records = Array.from({ length: 2345 }, (_, i) =>
        record(kb, 'big', i, axis(8, i % 8, (i * 3 + 1) % 8)),
      );
      await store.upsert(MODEL, org, records);
      expect(await store.countFile(MODEL, org, kb, 'big')).to.equal(2345);
      await store.deleteFile(MODEL, org, kb, 'big');
      expect(await store.countFile(MODEL, org, kb, 'big')).to.equal(0);
    });

    it('answers [] for an empty namespace, an unknown model and an empty filter', async () => {
      const q = { vector: axis(8, 0), topK: 5, knowledgeBaseIds: [uid('kb')] };
      expect(await store.query(MODEL, uid('org'), q)).to.deep.equal([]);
      const kb = uid('kb');
      await store.upsert(MODEL, org, [record(kb, 'f', 0, axis(8, 0))]);
      expect(await store.query(MODEL, org, { ...q, knowledgeBaseIds: [] })).to.deep.equal([]);
      expect(await store.query(MODEL, org, { ...q, knowledgeBaseIds: [kb], fileIds: [] })).to.deep.equal([]);
      expect(await store.countFile(OTHER_MODEL, uid('org'), kb, 'f')).to.equal(0);
      await store.deleteFile(OTHER_MODEL, uid('org'), kb, 'f');
    });

    it('refuses a vector of the wrong size', async () => {
      const err = await store
        .upsert(MODEL, org, [record(uid('kb'), 'f', 0, axis(12, 0))])
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Error);
    });
  });
}
