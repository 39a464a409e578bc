import { expect } from 'chai';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURES } from '@contracts';
import { embeddingFailure } from '@activities/knowledge-bases/ingestion';
import { EmbeddingRejected } from '@lib/embeddings/embedder';
import { EmbeddingUnavailable } from '@lib/embeddings/openai';

describe('how embedding failures reach Temporal', () => {
  it('makes a refusal final', () => {
    const failure = embeddingFailure(new EmbeddingRejected('input too long')) as ApplicationFailure;
    expect(failure).to.be.instanceOf(ApplicationFailure);
    expect([failure.nonRetryable, failure.type, failure.message]).to.deep.equal([
      true,
      FAILURES.embeddingRejected,
      'input too long',
    ]);
  });

  it('retries a rate limit after the wait it names', () => {
    const failure = embeddingFailure(new EmbeddingUnavailable('429', 30_000)) as ApplicationFailure;
    expect(failure.nonRetryable).to.equal(false);
    expect(failure.nextRetryDelay).to.equal(30_000);
  });

  it('leaves other failures to the retry policy', () => {
    const plain = new EmbeddingUnavailable('503');
    expect(embeddingFailure(plain)).to.equal(plain);
  });
});
