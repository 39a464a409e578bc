import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import {
  FAILURES,
  WORKFLOWS,
  type EmbedBatchInput,
  type IngestFileInput,
  type IngestFileResult,
  type UploadState,
} from '@contracts';
import { UPLOAD_WAIT_MS } from '@lib/knowledge-bases/object-store';
import { EMBED_BATCH } from '@workflows/ingest-file';
import { mutationTestingWorkerOptions } from '@test/helpers/mutation';
import { startTimeSkippingEnv } from '@test/helpers/time-skipping';
import { workflowBundle } from '@test/helpers/worker';

// The ingestion workflow alone, on the time-skipping test server with fake activities: the upload wait, the
// batches and every way a run ends are checked exactly, and an hour's wait takes no real time.

function fakeIngestion(env: TestWorkflowEnvironment) {
  const seen = {
    polls: [] as number[],
    enqueued: [] as number[],
    batches: [] as Array<[number, number]>,
    embedAttempts: 0,
    ready: 0,
    errors: [] as Array<{ message: string; at: number }>,
    etl: 0,
  };
  const answers = {
    upload: (): UploadState => ({ state: 'present', sizeBytes: 10 }),
    parse: (): Promise<{ chunkCount: number; pageCount: number | null }> =>
      Promise.resolve({ chunkCount: 300, pageCount: 12 }),
    embed: (): Promise<void> => Promise.resolve(),
  };
  const activities = {
    checkUpload: async () => {
      seen.polls.push(await env.currentTimeMs());
      return answers.upload();
    },
    markEnqueued: (_i: IngestFileInput, size: number) => {
      seen.enqueued.push(size);
      return Promise.resolve();
    },
    parseFile: () => answers.parse(),
    copyFromSource: () => answers.parse(),
    embedChunks: (input: EmbedBatchInput) => {
      seen.embedAttempts++;
      return answers.embed().then(() => {
        seen.batches.push([input.from, input.to]);
      });
    },
    markReady: () => {
      seen.ready++;
      return Promise.resolve();
    },
    markError: async (_i: IngestFileInput, message: string) => {
      seen.errors.push({ message, at: await env.currentTimeMs() });
    },
    runEtlRules: () => {
      seen.etl++;
      return Promise.resolve([]);
    },
  };
  return { seen, answers, activities };
}

describe('the ingestion workflow on the time-skipping test server', () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await startTimeSkippingEnv();
  });
  after(async () => env?.teardown());

  async function ingest(fake: ReturnType<typeof fakeIngestion>, extra: Partial<IngestFileInput> = {}) {
    const taskQueue = `kb-${randomUUID()}`;
    const start = await env.currentTimeMs();
    const input: IngestFileInput = {
      organizationId: 'org_wf',
      knowledgeBaseId: 'kb_1',
      fileId: `kbf_${randomUUID()}`,
      generation: 1,
      uploadDeadline: new Date(start + UPLOAD_WAIT_MS).toISOString(),
      ...extra,
    };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: fake.activities,
      ...mutationTestingWorkerOptions(),
    });
    const result = await worker.runUntil(
      env.client.workflow.execute<(i: IngestFileInput) => Promise<IngestFileResult>>(WORKFLOWS.ingestFile, {
        taskQueue,
        workflowId: `ingest-${input.fileId}`,
        args: [input],
      }),
    );
    return { result, start };
  }

  it('ends an upload that never comes in ERROR at the documented deadline, polling at growing intervals', async () => {
    const fake = fakeIngestion(env);
    fake.answers.upload = () => ({ state: 'absent' });
    const { result, start } = await ingest(fake);
    expect(result.status).to.equal('ERROR');
    expect(result.statusMessage).to.contain('no upload arrived');
    expect(fake.seen.errors).to.have.length(1);
    expect(fake.seen.errors[0]!.at - start).to.be.at.least(UPLOAD_WAIT_MS);
    expect(fake.seen.errors[0]!.at - start).to.be.below(UPLOAD_WAIT_MS + 60_000);
    const gaps = fake.seen.polls.slice(1).map((t, i) => t - fake.seen.polls[i]!);
    expect(gaps[1]!).to.be.greaterThan(gaps[0]!);
    expect(Math.max(...gaps)).to.be.at.most(30_000 + 1_000);
    expect(fake.seen.polls.length).to.be.below(200);
    expect(fake.seen.ready + fake.seen.enqueued.length).to.equal(0);
  });

  it('notices a late upload, embeds every chunk in batches exactly once, then runs the ETL rules', async () => {
    const fake = fakeIngestion(env);
    let polls = 0;
    fake.answers.upload = () => (++polls < 3 ? { state: 'absent' } : { state: 'present', sizeBytes: 42 });
    const { result } = await ingest(fake);
    expect(result).to.deep.equal({ status: 'READY' });
    expect(fake.seen.enqueued).to.deep.equal([42]);
    expect(fake.seen.batches).to.deep.equal([
      [0, EMBED_BATCH],
      [EMBED_BATCH, 2 * EMBED_BATCH],
      [2 * EMBED_BATCH, 300],
    ]);
    expect([fake.seen.ready, fake.seen.etl, fake.seen.errors.length]).to.deep.equal([1, 1, 0]);
  });

  it("ends an unparseable file in ERROR with the parser's own message, without retrying it", async () => {
    const fake = fakeIngestion(env);
    let parses = 0;
    fake.answers.parse = () => {
      parses++;
      throw ApplicationFailure.nonRetryable('the PDF is password-protected', FAILURES.fileUnparseable);
    };
    const { result } = await ingest(fake);
    expect(result).to.deep.equal({ status: 'ERROR', statusMessage: 'the PDF is password-protected' });
    expect(parses).to.equal(1);
    expect([fake.seen.ready, fake.seen.etl]).to.deep.equal([0, 0]);
  });

  it('retries a failing embedding server ten times, then ends in ERROR asking for a reindex', async () => {
    const fake = fakeIngestion(env);
    fake.answers.parse = () => Promise.resolve({ chunkCount: 5, pageCount: null });
    fake.answers.embed = () => Promise.reject(new Error('503 from the embedding server'));
    const { result } = await ingest(fake);
    expect(result.status).to.equal('ERROR');
    expect(result.statusMessage).to.contain('503 from the embedding server').and.contain('reindex');
    expect(fake.seen.embedAttempts).to.equal(10);
  });

  it('stops quietly, writing nothing, when the file was deleted or reindexed meanwhile', async () => {
    const fake = fakeIngestion(env);
    fake.answers.embed = () =>
      Promise.reject(ApplicationFailure.nonRetryable('the file was deleted', FAILURES.fileSuperseded));
    const { result } = await ingest(fake);
    expect(result).to.deep.equal({ status: 'superseded' });
    expect([fake.seen.errors.length, fake.seen.ready, fake.seen.etl]).to.deep.equal([0, 0, 0]);
  });

  it('copies without waiting for an upload', async () => {
    const fake = fakeIngestion(env);
    const { result } = await ingest(fake, { copyOf: { organizationId: 'org_wf', fileId: 'kbf_src' } });
    expect(result.status).to.equal('READY');
    expect(fake.seen.polls).to.have.length(0);
    expect(fake.seen.batches).to.have.length(3);
  });
});
