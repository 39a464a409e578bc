import { expect } from 'chai';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { createApp } from '@api/app';
import { createServices } from '@lib/services';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { appHtml, download, publish, uploadArtifact } from '@test/helpers/artifacts';

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe('artifacts: library, versions, sharing, pins', () => {
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Artifacts Org');
  });

  it('uploads text and binary content, keeping each version in S3 with its type, size and sha256', async () => {
    const html = appHtml(null, '<p>héllo</p>');
    const a = await uploadArtifact(env, org, org.chat.token, { name: '  Dashboard  ', content: html });
    expect(a).to.deep.include({
      name: 'Dashboard',
      scope: 'library',
      source: 'upload',
      contentType: 'text/html',
      creatorUserId: org.chat.userId,
      versionCount: 1,
      pinnedAt: null,
      currentVersionApproved: false,
    });
    expect(a.currentVersion).to.deep.include({
      version: 1,
      sizeBytes: Buffer.byteLength(html),
      sha256: sha(html),
      contentType: 'text/html',
    });
    const got = await download(env, org, org.chat.token, a.artifactId);
    expect(got.text).to.equal(html);
    expect(got.contentType).to.equal('text/html');
    expect(got.disposition).to.equal(`attachment; filename*=UTF-8''Dashboard.html`);

    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    const bin = await uploadArtifact(env, org, org.chat.token, {
      name: 'blob',
      contentType: 'Application/Octet-Stream',
      contentBase64: bytes.toString('base64'),
    });
    expect(bin.contentType).to.equal('application/octet-stream');
    expect(bin.currentVersion).to.deep.include({ sizeBytes: 9, sha256: sha(bytes) });
    const link = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${bin.artifactId}/download-link`))
      .expect(200);
    const res = await fetch(link.body.downloadLink as string);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).to.equal(true);
  });

  it('publishes versions in order; every version stays downloadable and the artifact lists them', async () => {
    const a = await uploadArtifact(env, org, org.admin.token, {
      contentType: 'text/markdown',
      content: '# v1',
    });
    const b = await publish(env, org, org.admin.token, a.artifactId, '# v2', 'text/markdown');
    const c = await publish(env, org, org.admin.token, a.artifactId, '<p>v3</p>', 'text/html; charset=utf-8');
    expect(c.versionCount).to.equal(3);
    expect(c.contentType).to.equal('text/html; charset=utf-8');
    expect(c.versions!.map((v) => v.version)).to.deep.equal([1, 2, 3]);
    expect(c.currentVersion.versionId).to.equal(c.versions![2]!.versionId);
    const got = await as(env, org.admin.token)
      .get(org.path(`/artifacts/${a.artifactId}`))
      .expect(200);
    expect(got.body.artifact.versions.map((v: { versionId: string }) => v.versionId)).to.deep.equal([
      a.currentVersion.versionId,
      b.currentVersion.versionId,
      c.currentVersion.versionId,
    ]);
    expect(
      (await download(env, org, org.admin.token, a.artifactId, b.currentVersion.versionId)).text,
    ).to.equal('# v2');
    expect((await download(env, org, org.admin.token, a.artifactId)).text).to.equal('<p>v3</p>');
    await as(env, org.admin.token)
      .post(org.path(`/artifacts/${a.artifactId}/download-link`), { versionId: 'ver_nope' })
      .expect(invalidReference('versionId'));
  });

  it('refuses bad content, names and types with a 4xx error body', async () => {
    const post = (body: object) => as(env, org.chat.token).post(org.path('/artifacts'), body);
    const refused = async (body: object, status: number, text: string) => {
      const res = await post(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(status);
      expect(res.body.error.message).to.contain(text);
    };
    await refused({ name: 'x', contentType: 'text/plain' }, 400, 'exactly one');
    await refused(
      { name: 'x', contentType: 'text/plain', content: 'a', contentBase64: 'YQ==' },
      400,
      'exactly one',
    );
    // openapi.yaml states these (patterns), so the contract's validator names them
    const base64 = 'contentBase64 must match pattern';
    await refused({ name: 'x', contentType: 'text/plain', contentBase64: 'not base64!' }, 400, base64);
    await refused({ name: 'x', contentType: 'text/plain', contentBase64: 'YQ' }, 400, base64);
    await refused({ name: 'x', contentType: 'no type', content: 'a' }, 400, 'contentType must match pattern');
    await refused({ name: '   ', contentType: 'text/plain', content: 'a' }, 400, 'name must not be blank');
    await refused({ name: 'n'.repeat(501), contentType: 'text/plain', content: 'a' }, 400, '1 to 500');
    await refused({ name: 'x', contentType: 'text/plain', content: 'a', extra: 1 }, 400, 'additional');
    const long = await uploadArtifact(env, org, org.chat.token, { name: `  ${'n'.repeat(500)}  ` });
    expect(long.name).to.have.length(500);
    const text = await as(env, org.chat.token)
      .post(org.path('/artifacts'))
      .set('content-type', 'text/plain')
      .send('hello');
    expect(text.status).to.equal(415);
  });

  it('caps a version at ARTIFACT_MAX_BYTES decoded, for uploads, versions and base64 alike', async () => {
    const config = { ...env.config, artifacts: { ...env.config.artifacts, maxBytes: 100 } };
    const services = createServices({ ...env.deps, config });
    const app = createApp({ ...env.deps, config, services });
    const post = (path: string, body: object) =>
      request(app).post(org.path(path)).set('Authorization', `Bearer ${org.chat.token}`).send(body);
    const ok = await post('/artifacts', { name: 'x', contentType: 'text/plain', content: 'a'.repeat(100) });
    expect(ok.status).to.equal(201);
    const id = ok.body.artifact.artifactId as string;
    for (const [path, body] of [
      ['/artifacts', { name: 'x', contentType: 'text/plain', content: 'é'.repeat(51) }],
      [
        '/artifacts',
        { name: 'x', contentType: 'text/plain', contentBase64: Buffer.alloc(101).toString('base64') },
      ],
      [`/artifacts/${id}/versions`, { contentType: 'text/plain', content: 'a'.repeat(101) }],
    ] as const) {
      const res = await post(path, body);
      expect(res.status, path).to.equal(413);
      expect(res.body.error).to.include({ code: 'payload_too_large' });
      expect(res.body.error.message).to.contain('at most 100 bytes');
    }
    // far past the body limit the parser refuses before reading it all
    const huge = await post('/artifacts', {
      name: 'x',
      contentType: 'text/plain',
      content: 'a'.repeat(300_000),
    });
    expect(huge.status).to.equal(413);
    const after = await as(env, org.chat.token)
      .get(org.path(`/artifacts/${id}`))
      .expect(200);
    expect(after.body.artifact.versionCount).to.equal(1);
  });

  it('renames (trimmed) without changing anything else', async () => {
    const a = await uploadArtifact(env, org, org.chat.token, { name: 'Before' });
    const renamed = await as(env, org.chat.token)
      .put(org.path(`/artifacts/${a.artifactId}`), { name: '  After  ' })
      .expect(200);
    expect(renamed.body.artifact).to.deep.include({ name: 'After', versionCount: 1 });
    expect(renamed.body.artifact.currentVersion).to.deep.equal(a.currentVersion);
    for (const name of ['', '   ', 'n'.repeat(501)])
      await as(env, org.chat.token)
        .put(org.path(`/artifacts/${a.artifactId}`), { name })
        .expect(400);
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${a.artifactId}`), {})
      .expect(400);
  });

  it('promotes a conversation artifact to the library once', async () => {
    const conversation = await env.deps.repos
      .tenant(org.organizationId)
      .conversations.createForRequest('req-promote', {
        agentId: 'default-assistant',
        title: 'chat',
        creatorUserId: org.chat.userId,
        isBrowserTask: false,
      });
    const made = await env.deps.services.toolArtifacts.create(
      {
        organizationId: org.organizationId,
        agentId: 'default-assistant',
        conversationId: conversation._id,
        userId: org.chat.userId,
        requestId: 'req-promote',
        toolCallId: 'call-1',
      },
      { name: 'Draft', contentType: 'text/markdown', content: '# draft' },
    );
    const listed = await as(env, org.chat.token)
      .get(org.path(`/artifacts?conversationId=${conversation._id}`))
      .expect(200);
    expect(listed.body.items.map((a: { artifactId: string }) => a.artifactId)).to.deep.equal([
      made.artifactId,
    ]);
    expect(listed.body.items[0]).to.deep.include({ scope: 'conversation', source: 'conversation' });
    const promoted = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${made.artifactId}/promote`), { name: ' Final ' })
      .expect(200);
    expect(promoted.body.artifact).to.deep.include({
      scope: 'library',
      name: 'Final',
      conversationId: conversation._id,
      promotedBy: org.chat.userId,
    });
    expect(promoted.body.artifact.currentVersion.versionId).to.equal(made.versionId);
    const again = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${made.artifactId}/promote`))
      .expect(409);
    expect(again.body.error.code).to.equal('conflict');
  });
});
