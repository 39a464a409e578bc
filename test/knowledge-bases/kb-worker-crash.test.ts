import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { testEnv } from '@test/helpers/env';
import { createKb, settled, uploadFile } from '@test/helpers/kb';
import { as, createTestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { startWorkerProcess } from '@test/helpers/worker-process';

/** About 600 chunks of distinct text: several embedding batches, seconds of work for the local model. */
function longText(): string {
  const topics = ['roof', 'boiler', 'lift', 'garden', 'parking', 'laundry', 'bins', 'keys', 'post', 'gym'];
  return Array.from(
    { length: 3000 },
    (_, i) =>
      `Note ${i} about the ${topics[i % topics.length]}: item ${i * 7} was checked on day ${i % 28} ` +
      `and the result, number ${i * 13}, was written down in register ${Math.floor(i / 10)}.`,
  ).join('\n');
}

describe('a worker killed in the middle of an ingestion', () => {
  const workers: ChildProcess[] = [];
  after(() => workers.forEach((w) => w.kill('SIGKILL')));

  it('is replaced by another worker and the file becomes READY once, with no duplicate vectors', async function () {
    this.timeout(600_000);
    const env = await testEnv();
    const org = await createTestOrg(env, 'KB Crash Org');
    const first = startWorkerProcess(env);
    workers.push(first);
    const kb = await createKb(env, org);
    const file = await uploadFile(env, org, kb, 'register.txt', longText());
    const model = env.deps.embedders.defaultEmbedder.model;
    const vectors = () => env.deps.vectors.countFile(model, org.organizationId, kb, file.fileId);
    // Kill the worker once some, not all, vectors are written: in the middle of the embedding batches.
    await eventually(async () => (await vectors()) > 0, 300_000);
    const before = await as(env, org.admin.token).get(org.path(`/knowledgebases/${kb}/files/${file.fileId}`));
    expect(before.body.status).to.equal('PROCESSING');
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    workers.push(startWorkerProcess(env));
    const ready = await settled(env, org, kb, file.fileId, 300_000);
    expect(ready.status).to.equal('READY');
    const chunkCount = ready.chunkCount as number;
    expect(chunkCount).to.be.greaterThan(256);
    expect(await vectors()).to.equal(chunkCount);
    const run = env.deps.temporal.client.workflow.getHandle(`ingest-${org.organizationId}-${file.fileId}-1`);
    expect((await run.result()).status).to.equal('READY');
  });
});
