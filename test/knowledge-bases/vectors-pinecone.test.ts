import { expect } from 'chai';
import { vectorId, vectorIdPrefix } from '@lib/vectors/ids';
import { PineconeVectorStore } from '@lib/vectors/pinecone';
import type { EmbeddingModelRef, VectorRecord } from '@lib/vectors/vector-store';
import { FakePinecone } from '@test/helpers/fake-pinecone';

const LARGE: EmbeddingModelRef = { id: 'openai:text-embedding-3-small', dimensions: 1536 };

describe('Pinecone vector store: ids and request limits', function () {
  this.timeout(60_000);
  let fake: FakePinecone;
  let store: PineconeVectorStore;

  before(async () => {
    fake = await FakePinecone.start({ large: { dimension: 1536 } });
    store = new PineconeVectorStore({
      apiKey: fake.apiKey,
      indexes: { [LARGE.id]: { name: 'large', host: fake.index('large').host } },
    });
  });
  after(() => fake.close());
  beforeEach(() => (fake.index('large').requests.length = 0));

  const rec = (i: number): VectorRecord => ({
    id: vectorId('kb', 'f', i),
    values: Array.from({ length: 1536 }, (_, d) => Math.sin(i * 31 + d)),
    metadata: { knowledgeBaseId: 'kb', fileId: 'f', chunkId: `c${i}` },
  });

  it('splits upserts of large vectors under the 2 MB request limit', async () => {
    await store.upsert(
      LARGE,
      'org',
      Array.from({ length: 300 }, (_, i) => rec(i)),
    );
    const upserts = fake.index('large').requests.filter((r) => r === 'POST /vectors/upsert');
    expect(upserts.length).to.be.greaterThan(1);
    expect(await store.countFile(LARGE, 'org', 'kb', 'f')).to.equal(300);
  });

  it('refuses ids that deletes by prefix could not find', async () => {
    const stray = { ...rec(0), id: 'chunk-0' };
    const err = await store.upsert(LARGE, 'org', [stray]).catch((e: unknown) => e);
    expect((err as Error).message).to.match(/vectorId/);
    const mismatched = { ...rec(0), id: vectorId('kb', 'other-file', 0) };
    expect(await store.upsert(LARGE, 'org', [mismatched]).catch((e: unknown) => e)).to.be.instanceOf(Error);
  });

  it('fails on a model with no configured index', async () => {
    const err = await store
      .query({ id: 'local:x', dimensions: 3 }, 'org', {
        vector: [1, 0, 0],
        topK: 1,
        knowledgeBaseIds: ['kb'],
      })
      .catch((e: unknown) => e);
    expect((err as Error).message).to.match(/no Pinecone index/);
  });

  it('surfaces a wrong API key as an error', async () => {
    const wrong = new PineconeVectorStore({
      apiKey: 'nope',
      indexes: { [LARGE.id]: { name: 'large', host: fake.index('large').host } },
    });
    expect(await wrong.countFile(LARGE, 'org', 'kb', 'f').catch((e: unknown) => e)).to.be.instanceOf(Error);
  });
});

describe('vector ids', () => {
  it('nest a file under its knowledge base so both are id prefixes', () => {
    const id = vectorId('kb1', 'file9', 12);
    expect(id).to.equal('kb1#file9#12');
    expect(id.startsWith(vectorIdPrefix('kb1', 'file9'))).to.equal(true);
    expect(id.startsWith(vectorIdPrefix('kb1'))).to.equal(true);
    // kb1's prefix must not match kb10's ids
    expect(vectorId('kb10', 'f', 0).startsWith(vectorIdPrefix('kb1'))).to.equal(false);
    expect(vectorId('kb1', 'file90', 0).startsWith(vectorIdPrefix('kb1', 'file9'))).to.equal(false);
  });

  it('refuse parts that would break the prefixes', () => {
    expect(() => vectorId('kb#1', 'f', 0)).to.throw();
    expect(() => vectorId('kb', '', 0)).to.throw();
    expect(() => vectorId('kb', 'f', -1)).to.throw();
    expect(() => vectorIdPrefix('kb', 'a#b')).to.throw();
  });
});
