import { workflowIds } from '@contracts';
import { recordHistory } from '@test/helpers/histories';
import { expect } from 'chai';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { addMember, as, createTestOrg } from '@test/helpers/org';
import { createKb, search, settled, uploadFile } from '@test/helpers/kb';
import { uploadKeyOf } from '@lib/knowledge-bases/object-store';

const LEASE =
  'The tenant pays rent on the first day of each month. The lease renews every two years unless either side gives notice.';
const PETS =
  'Cats and small dogs are allowed in the building. Larger animals need written permission from the owner.';

describe('knowledge bases: upload, ingestion and search', function () {
  this.timeout(120_000);
  const suite = useWorkerAndOrg('KB Org');

  it('takes a presigned PUT from plain fetch to READY and finds the text by meaning', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const lease = await uploadFile(env, org, kb, 'lease.txt', LEASE);
    expect(lease.status).to.equal('WAITING-UPLOAD');
    const pets = await uploadFile(env, org, kb, 'pets.md', PETS, 'text/markdown');
    const ready = await settled(env, org, kb, lease.fileId);
    expect(ready).to.include({
      status: 'READY',
      statusMessage: null,
      chunkCount: 1,
      sizeBytes: LEASE.length,
    });
    expect((await settled(env, org, kb, pets.fileId)).status).to.equal('READY');
    await recordHistory(env, workflowIds.ingestFile(org.organizationId, lease.fileId, 1), 'kb-ingest-file');

    const hits = await search(env, org, kb, 'when is the rent due');
    expect(hits[0]).to.include({ fileName: 'lease.txt', fileId: lease.fileId, text: LEASE });
    const petHits = await search(env, org, kb, 'are cats allowed');
    expect(petHits[0]!.fileName).to.equal('pets.md');
  });

  it('takes an upload from the AWS SDK presigner, and refuses a PUT with another Content-Type', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const res = await as(env, org.admin.token)
      .post(org.path(`/knowledgebases/${kb}/files/upload-url`), {
        fileName: 'notes.txt',
        contentType: 'text/plain',
      })
      .expect(201);
    const wrongType = await fetch(res.body.uploadUrl, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/pdf' },
      body: 'x',
    });
    expect(wrongType.status).to.equal(403);
    // The AWS SDK's own PUT to the URL the service signed.
    const sdkPut = await fetch(res.body.uploadUrl, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain' },
      body: LEASE,
    });
    expect(sdkPut.status).to.equal(200);
    expect((await settled(env, org, kb, res.body.fileId)).status).to.equal('READY');
    // And a URL presigned by the SDK for the same key reaches the same object store.
    const url = await getSignedUrl(
      env.deps.s3,
      new PutObjectCommand({ Bucket: env.config.s3.bucket, Key: res.body.key, ContentType: 'text/plain' }),
      { expiresIn: 60 },
    );
    expect(
      (await fetch(url, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: LEASE })).status,
    ).to.equal(200);
  });

  it('ends an empty file in ERROR with a reason, and a reindex after a new upload makes it READY', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const file = await uploadFile(env, org, kb, 'empty.txt', '');
    const failed = await settled(env, org, kb, file.fileId);
    expect(failed.status).to.equal('ERROR');
    expect(failed.statusMessage).to.match(/empty|no text/);

    const put = await fetch(file.uploadUrl!, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain' },
      body: PETS,
    });
    expect(put.status).to.equal(200);
    const reindexed = await as(env, org.admin.token)
      .put(org.path(`/knowledgebases/${kb}/files/${file.fileId}/reindex`))
      .expect(200);
    expect(reindexed.body).to.include({ status: 'ENQUEUED', generation: 2 });
    const ready = await settled(env, org, kb, file.fileId);
    expect(ready).to.include({ status: 'READY', generation: 2 });
    await recordHistory(
      env,
      workflowIds.ingestFile(org.organizationId, file.fileId, 1),
      'kb-ingest-empty-file',
    );
    expect((await search(env, org, kb, 'dogs'))[0]!.fileId).to.equal(file.fileId);
  });

  it('ends a file over the 100 MB limit in ERROR saying so, without reading it', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const max = env.config.kb.maxFileBytes;
    expect(max).to.equal(100 * 1024 * 1024);
    const file = await uploadFile(env, org, kb, 'huge.txt', Buffer.alloc(max + 1, 'a'));
    const failed = await settled(env, org, kb, file.fileId);
    expect(failed).to.include({ status: 'ERROR', sizeBytes: max + 1 });
    expect(failed.statusMessage).to.equal(
      `the file (${max + 1} bytes) is larger than the ${max} bytes (100 MB) a file may have; ` +
        'split or compress it and upload it again',
    );
    // deleted before anything read it (issue 32), wherever the upload URL had put it
    expect(await env.deps.objects.size(file.key as string)).to.equal(null);
    expect(await env.deps.objects.size(uploadKeyOf(file.key as string))).to.equal(null);
  });

  it('refuses unsupported extensions at upload-url, and a chat member writing an organization knowledge base', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const bad = await as(env, org.admin.token)
      .post(org.path(`/knowledgebases/${kb}/files/upload-url`), {
        fileName: 'run.exe',
        contentType: 'application/octet-stream',
      })
      .expect(400);
    // The accepted extensions are the contract's (openapi.yaml): the validator names the field.
    expect(bad.body.error.message).to.match(/fileName must match pattern/);
    await as(env, org.chat.token)
      .post(org.path(`/knowledgebases/${kb}/files/upload-url`), {
        fileName: 'a.txt',
        contentType: 'text/plain',
      })
      .expect(403);
    await as(env, org.chat.token)
      .post(org.path('/knowledgebases'), { title: 'Mine', llmDescription: '', type: 'ORGANIZATION' })
      .expect(403);
  });

  it("keeps a member's PERSONAL knowledge base out of another member's global search", async () => {
    const { env, org } = suite;
    const personal = await as(env, org.chat.token)
      .post(org.path('/knowledgebases'), { title: 'My lease', llmDescription: 'mine', type: 'PERSONAL' })
      .expect(201);
    const kb = personal.body.knowledgeBaseId as string;
    const file = await uploadFile(env, org, kb, 'lease.txt', LEASE);
    expect((await settled(env, org, kb, file.fileId)).status).to.equal('READY');
    const globalHits = async (token: string) =>
      (
        (await as(env, token).get(org.path('/knowledgebases/search?q=when is the rent due')).expect(200)).body
          .items as Array<{ fileId: string }>
      ).map((h) => h.fileId);
    // its creator finds it, a member of the same organization and group does not
    expect(await globalHits(org.chat.token)).to.include(file.fileId);
    const other = await addMember(env, org.organizationId, 'chat', 'Other Chat');
    expect(await globalHits(other.token)).not.to.include(file.fileId);
    // Named in the query, it is a reference the caller cannot see: 400 invalid_reference, as for a missing one.
    const named = await as(env, other.token)
      .get(org.path(`/knowledgebases/search?q=rent&kbIds=${kb}`))
      .expect(400);
    expect(named.body.error.code).to.equal('invalid_reference');
  });

  it('keeps private files out of another organization, in both searches', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const file = await uploadFile(env, org, kb, 'lease.txt', LEASE);
    await settled(env, org, kb, file.fileId);
    const other = await createTestOrg(env, 'Other Org');
    await as(env, other.owner.token)
      .get(other.path(`/knowledgebases/${kb}`))
      .expect(404);
    await as(env, other.owner.token)
      .get(other.path(`/knowledgebases/${kb}/search?q=rent`))
      .expect(404);
    await as(env, other.owner.token)
      .get(org.path(`/knowledgebases/${kb}/search?q=rent`))
      .expect(401);
    const global = await as(env, other.owner.token)
      .get(other.path('/knowledgebases/search?q=rent'))
      .expect(200);
    expect(global.body.items.map((h: { fileId: string }) => h.fileId)).not.to.include(file.fileId);
    const named = await as(env, other.owner.token)
      .get(other.path(`/knowledgebases/search?q=rent&kbIds=${kb}&kbOrgs=${org.organizationId}`))
      .expect(400);
    expect(named.body.error.code).to.equal('invalid_reference');
  });
});
