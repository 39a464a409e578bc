import { expect } from 'chai';
import OpenAI from 'openai';
import { createEmbedder } from '@lib/embeddings/create-embedder';
import { EmbeddingRejected } from '@lib/embeddings/embedder';
import { LocalEmbedder } from '@lib/embeddings/local';
import { EmbeddingUnavailable, OpenAiEmbedder } from '@lib/embeddings/openai';
import { startScriptedLlm, type ScriptedLlm } from '@test/helpers/llm';
import { embed as scriptedVector } from '@test/helpers/llm-sse';

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (a: number[]) => Math.sqrt(dot(a, a));
/** The vector the scripted server gives a text (its own deterministic embedding), up to rounding. */
function expectScripted(v: number[] | undefined, text: string): void {
  const want = scriptedVector(text, 1536);
  expect(v).to.have.length(1536);
  expect(dot(v!, want), text).to.be.closeTo(1, 1e-9);
}

function modelDir(): string {
  const dir = process.env.LOCAL_EMBEDDING_MODEL_DIR;
  if (!dir) throw new Error('LOCAL_EMBEDDING_MODEL_DIR is not set: run the tests with npm test');
  return dir;
}

describe('local embedder (all-MiniLM-L6-v2, int8 ONNX)', function () {
  // CPU inference of a transformer on a shared machine: seconds per batch of long texts.
  this.timeout(180_000);
  let embedder: LocalEmbedder;

  before(async () => {
    embedder = await LocalEmbedder.load(modelDir(), { tokenBudget: 96 });
  });
  after(() => embedder.close());

  it('gives 384-dimensional unit vectors, the model sentence-transformers publishes', async () => {
    const [v] = await embedder.embed(['This is an example sentence']);
    expect(v).to.have.length(384);
    expect(norm(v!)).to.be.closeTo(1, 1e-6);
    // The first components sentence-transformers prints for this sentence (float model); int8 weights move
    // them by a few thousandths, a wrong tokenizer or pooling by far more.
    const published = [0.0677, 0.0635, 0.0487, 0.0793, 0.0374];
    published.forEach((x, i) => expect(v![i]).to.be.closeTo(x, 0.006));
  });

  it('places related sentences closer than unrelated ones', async () => {
    const cases = [
      [
        'How do I reset my password?',
        'Steps to recover access to your account if you forgot your password',
        'The quarterly revenue grew by twelve percent',
      ],
      [
        'A man is playing a guitar on stage',
        'Someone performs music with a string instrument',
        'The recipe needs two cups of flour',
      ],
      [
        'Invoices are due within thirty days',
        'Payment terms: customers must pay bills in a month',
        'Penguins live in the southern hemisphere',
      ],
    ];
    for (const [query, related, unrelated] of cases) {
      const [q, r, u] = await embedder.embed([query!, related!, unrelated!]);
      expect(dot(q!, r!), `${query} ~ ${related}`).to.be.greaterThan(dot(q!, u!) + 0.2);
    }
  });

  it('returns vectors in input order across batches of different lengths', async () => {
    // Mixed lengths: sorted by length and split into several batches (token budget 96) inside embed().
    const texts = [
      'A long paragraph about knowledge bases, uploaded files, chunking and embeddings. '.repeat(4),
      'short',
      'Temporal retries the activity when the embeddings API is rate limited.',
      'Vectors',
      'The embedded store keeps one table per embedding model and the organization as a column.',
    ];
    const together = await embedder.embed(texts);
    expect(together).to.have.length(texts.length);
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text]);
      expect(dot(together[i]!, alone!), text).to.be.closeTo(1, 1e-4);
    }
    expect(dot(together[1]!, together[3]!)).to.be.lessThan(0.99);
  });

  it('truncates a text longer than the model takes (256 tokens) instead of failing', async () => {
    const long = 'word '.repeat(2000);
    const [v, prefix] = await embedder.embed([long, 'word '.repeat(254)]);
    expect(v).to.have.length(384);
    // Both are [CLS] + 254 × "word" + [SEP].
    expect(dot(v!, prefix!)).to.be.closeTo(1, 1e-5);
  });

  it('createEmbedder loads the local model on first use and names it', async () => {
    const e = createEmbedder({ provider: 'local', localModelDir: modelDir() }, new OpenAI({ apiKey: 'x' }));
    expect(e.model).to.deep.equal({ id: 'local:all-MiniLM-L6-v2', dimensions: 384 });
    const [a, b] = await e.embed(['the cat sat on the mat', 'the cat sat on the mat']);
    expect(dot(a!, b!)).to.be.closeTo(1, 1e-6);
  });

  it('createEmbedder refuses the local provider without a model folder', () => {
    expect(() => createEmbedder({ provider: 'local' }, new OpenAI({ apiKey: 'x' }))).to.throw(
      /LOCAL_EMBEDDING_MODEL_DIR/,
    );
  });
});

describe('OpenAI embedder against the scripted OpenAI-compatible server', () => {
  let llm: ScriptedLlm;
  let client: OpenAI;

  before(async () => {
    llm = await startScriptedLlm({ dimensions: 1536 });
    client = new OpenAI({ baseURL: llm.baseURL, apiKey: llm.apiKey, maxRetries: 0 });
  });
  beforeEach(() => llm.reset());
  after(() => llm.close());

  const embeddingRequests = () => llm.requests.filter((r) => r.path === '/v1/embeddings');

  it('names the model and knows its size before the first call', () => {
    const e = new OpenAiEmbedder(client, { model: 'text-embedding-3-large' });
    expect(e.model).to.deep.equal({ id: 'openai:text-embedding-3-large', dimensions: 3072 });
  });

  it('batches by input count and keeps input order', async () => {
    const e = createEmbedder({ provider: 'openai', model: 'text-embedding-3-small' }, client);
    const texts = Array.from({ length: 200 }, (_, i) => `chunk number ${i} about topic ${i % 7}`);
    const vectors = await e.embed(texts);
    expect(embeddingRequests().map((r) => (r.body as { input: string[] }).input.length)).to.deep.equal([
      96, 96, 8,
    ]);
    expect(vectors).to.have.length(200);
    vectors.forEach((v, i) => expectScripted(v, texts[i]!));
  });

  it('batches by characters per request', async () => {
    const e = new OpenAiEmbedder(client, { model: 'text-embedding-3-small', maxCharsPerRequest: 100 });
    const texts = ['a'.repeat(60), 'b'.repeat(30), 'c'.repeat(30), 'd'.repeat(150), 'e'];
    const vectors = await e.embed(texts);
    expect(embeddingRequests().map((r) => (r.body as { input: string[] }).input)).to.deep.equal([
      [texts[0], texts[1]],
      [texts[2]],
      [texts[3]],
      [texts[4]],
    ]);
    expectScripted(vectors[3], texts[3]!);
  });

  it('learns the size of a model it does not know from the first reply', async () => {
    const e = new OpenAiEmbedder(client, { model: 'my-compatible-embedder' });
    expect(e.model.dimensions).to.equal(0);
    await e.embed(['hello']);
    expect(e.model).to.deep.equal({ id: 'openai:my-compatible-embedder', dimensions: 1536 });
  });

  it('rejects (no retry will help) a reply of another size than the model has', async () => {
    const e = new OpenAiEmbedder(client, { model: 'my-compatible-embedder', dimensions: 384 });
    const err = await e.embed(['hello']).catch((x: unknown) => x);
    expect(err).to.be.instanceOf(EmbeddingRejected);
  });

  for (const status of [400, 401, 404, 422]) {
    it(`turns a ${status} into EmbeddingRejected`, async () => {
      llm.failEmbeddings({ status, message: 'input is too long' });
      const err = await new OpenAiEmbedder(client, { model: 'text-embedding-3-small' })
        .embed(['x'])
        .catch((x: unknown) => x);
      expect(err).to.be.instanceOf(EmbeddingRejected);
      expect((err as Error).message).to.include(String(status));
    });
  }

  for (const status of [408, 409, 429, 500, 503]) {
    it(`turns a ${status} into a retryable error (not EmbeddingRejected)`, async () => {
      llm.failEmbeddings({ status, message: 'busy' });
      const err = await new OpenAiEmbedder(client, { model: 'text-embedding-3-small' })
        .embed(['x'])
        .catch((x: unknown) => x);
      expect(err).to.be.instanceOf(EmbeddingUnavailable);
      expect(err).not.to.be.instanceOf(EmbeddingRejected);
      expect(embeddingRequests()).to.have.length(1);
    });
  }

  it('waits out a short Retry-After once and succeeds', async () => {
    llm.failEmbeddings({ status: 429, message: 'slow down', retryAfterMs: 20 });
    const vectors = await new OpenAiEmbedder(client, { model: 'text-embedding-3-small' }).embed(['x']);
    expectScripted(vectors[0], 'x');
    expect(embeddingRequests()).to.have.length(2);
  });

  it('fails after one wait when the rate limit persists', async () => {
    llm.failEmbeddings({ status: 429, message: 'slow down', retryAfterMs: 20 }, 2);
    const err = await new OpenAiEmbedder(client, { model: 'text-embedding-3-small' })
      .embed(['x'])
      .catch((x: unknown) => x);
    expect(err).to.be.instanceOf(EmbeddingUnavailable);
    expect(embeddingRequests()).to.have.length(2);
  });

  it('hands a long Retry-After to the caller instead of sleeping on it', async () => {
    llm.failEmbeddings({ status: 429, message: 'slow down', retryAfterMs: 120_000 });
    const err = await new OpenAiEmbedder(client, { model: 'text-embedding-3-small' })
      .embed(['x'])
      .catch((x: unknown) => x);
    expect(err).to.be.instanceOf(EmbeddingUnavailable);
    expect((err as EmbeddingUnavailable).retryAfterMs).to.equal(120_000);
    expect(embeddingRequests()).to.have.length(1);
  });

  it('turns an unreachable server into a retryable error', async () => {
    const dead = await startScriptedLlm();
    const url = dead.baseURL;
    await dead.close();
    const offline = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const err = await new OpenAiEmbedder(offline, { model: 'text-embedding-3-small' })
      .embed(['x'])
      .catch((x: unknown) => x);
    expect(err).to.be.instanceOf(EmbeddingUnavailable);
  });
});
