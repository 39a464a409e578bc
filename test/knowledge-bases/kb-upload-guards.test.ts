import { expect } from 'chai';
import { workflowIds } from '@contracts';
import { uploadKeyOf } from '@lib/knowledge-bases/object-store';
import { createKb, search, settled, uploadFile } from '@test/helpers/kb';
import { as } from '@test/helpers/org';
import { useWorkerAndOrg } from '@test/helpers/worker';

const LEASE =
  'The tenant pays rent on the first day of each month. The lease renews every two years unless either side gives notice.';
const PETS =
  'Cats and small dogs are allowed in the building. Larger animals need written permission from the owner.';

// Issue 32, item 7: an upload URL is valid for an hour and S3 takes up to 5 GB on it.
describe('knowledge bases: what an upload URL can still do', function () {
  this.timeout(180_000);
  const suite = useWorkerAndOrg('KB Upload Guards Org');

  it('keeps the bytes that were indexed: a PUT to the upload URL after READY changes neither downloads nor a reindex', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const file = await uploadFile(env, org, kb, 'lease.txt', LEASE, 'text/plain', {
      createDownloadLink: true,
    });
    expect((await settled(env, org, kb, file.fileId)).status).to.equal('READY');
    // The store still takes the PUT (a signed URL cannot be revoked) ...
    const late = await fetch(file.uploadUrl!, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain' },
      body: PETS,
    });
    expect(late.status).to.equal(200);
    // ... but nothing reads what it wrote.
    expect(await (await fetch(file.downloadLink as string)).text()).to.equal(LEASE);
    await as(env, org.admin.token)
      .put(org.path(`/knowledgebases/${kb}/files/${file.fileId}/reindex`))
      .expect(200);
    expect(await settled(env, org, kb, file.fileId)).to.include({ status: 'READY', generation: 2 });
    const hits = await search(env, org, kb, 'are cats allowed');
    expect(hits.map((h) => h.text)).to.deep.equal([LEASE]);
    const link = await as(env, org.chat.token)
      .post(org.path(`/knowledgebases/${kb}/files/${file.fileId}/download-link`))
      .expect(200);
    expect(await (await fetch(link.body.downloadLink as string)).text()).to.equal(LEASE);
    // READY removed what the late PUT left at the upload URL's key
    expect(await env.deps.objects.size(uploadKeyOf(file.key as string))).to.equal(null);
  });

  it('processes nothing when its start was refused: a start Temporal takes after the deadline stops quietly', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const res = await as(env, org.admin.token)
      .post(org.path(`/knowledgebases/${kb}/files/upload-url`), {
        fileName: 'lease.txt',
        contentType: 'text/plain',
      })
      .expect(201);
    const fileId = res.body.fileId as string;
    // What the API writes when the start call fails (a frozen Temporal server that takes the start later): this
    // run is the late one.
    const refused = 'processing could not be started; reindex the file once the service is healthy';
    await env.deps.repos
      .tenant(org.organizationId)
      .kbFiles.setForGeneration(fileId, 1, { status: 'ERROR', statusMessage: refused });
    const put = await fetch(res.body.uploadUrl as string, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain' },
      body: LEASE,
    });
    expect(put.status).to.equal(200);
    const run = env.deps.temporal.client.workflow.getHandle(
      workflowIds.ingestFile(org.organizationId, fileId, 1),
    );
    expect(await run.result()).to.deep.equal({ status: 'superseded' });
    expect(await settled(env, org, kb, fileId)).to.include({ status: 'ERROR', statusMessage: refused });
    // The bytes were never taken: a reindex (a new generation) takes them.
    expect(await env.deps.objects.size(uploadKeyOf(res.body.key as string))).to.equal(LEASE.length);
  });

  it('signs a declared size: a PUT of another length is refused, a size over the limit is a 400', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const res = await as(env, org.admin.token)
      .post(org.path(`/knowledgebases/${kb}/files/upload-url`), {
        fileName: 'lease.txt',
        contentType: 'text/plain',
        sizeBytes: Buffer.byteLength(LEASE),
      })
      .expect(201);
    const put = (body: string) =>
      fetch(res.body.uploadUrl as string, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body });
    expect((await put(`${LEASE} And one more sentence.`)).status).to.equal(403);
    expect((await put(LEASE)).status).to.equal(200);
    expect(await settled(env, org, kb, res.body.fileId as string)).to.include({
      status: 'READY',
      sizeBytes: Buffer.byteLength(LEASE),
    });
    const max = env.config.kb.maxFileBytes;
    const tooBig = await as(env, org.admin.token)
      .post(org.path(`/knowledgebases/${kb}/files/upload-url`), {
        fileName: 'huge.txt',
        contentType: 'text/plain',
        sizeBytes: max + 1,
      })
      .expect(400);
    expect(tooBig.body.error.code).to.equal('file_too_large');
    expect(tooBig.body.error.message).to.contain(String(max));
  });
});
