import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '@api/app';
import { manifestSha256 } from '@lib/artifacts/app-manifest';
import { ArtifactVersions } from '@lib/artifacts/artifact-versions';
import { newId } from '@lib/ids';
import type { WorkflowCatalog, WorkflowStartRequest } from '@lib/artifacts/workflow-catalog';
import { createServices } from '@lib/services';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { appHtml, onlyChnOk, publish, tableWithRows, uploadArtifact } from '@test/helpers/artifacts';

describe('app manifests: what a version declares and its approval', () => {
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Manifest Org');
  });

  const manifestOf = (artifactId: string, query = '', token = org.chat.token) =>
    as(env, token).get(org.path(`/artifacts/${artifactId}/app-manifest${query}`));
  const approve = (artifactId: string, body?: object, token = org.admin.token) =>
    as(env, token).put(org.path(`/artifacts/${artifactId}/app-manifest`), body);

  it('reads no manifest from a plain page or a file that is not HTML', async () => {
    for (const fields of [
      { content: appHtml(null) },
      { contentType: 'text/plain', content: '<script data-file="service.manifest.ts">{}</script>' },
    ]) {
      const a = await uploadArtifact(env, org, org.chat.token, fields);
      const res = await manifestOf(a.artifactId).expect(200);
      expect(res.body).to.deep.equal({
        versionId: a.currentVersion.versionId,
        declared: null,
        declaredSha256: null,
        declaredError: null,
        approved: null,
      });
      const refused = await approve(a.artifactId).expect(400);
      expect(refused.body.error.code).to.equal('app_manifest_absent');
    }
  });

  it('reports an embedded manifest that is not JSON or has the wrong shape, and refuses to approve it', async () => {
    for (const [body, code] of [
      ['{ tables: [] }', 'app_manifest_invalid_json'],
      ['{"tables": [{"table": "t", "access": "everything"}]}', 'app_manifest_invalid_shape'],
    ] as const) {
      const a = await uploadArtifact(env, org, org.chat.token, { content: appHtml(body) });
      const res = await manifestOf(a.artifactId).expect(200);
      expect(res.body).to.deep.include({
        declared: null,
        declaredSha256: null,
        declaredError: code,
        approved: null,
      });
      const refused = await approve(a.artifactId).expect(400);
      expect(refused.body.error.code).to.equal(code);
    }
  });

  it('refuses a manifest naming tables or workflows that do not exist, naming them', async () => {
    await tableWithRows(env, org, 'orders', []);
    const manifest = {
      workflows: ['chn_reports'],
      tables: [
        { table: 'orders', access: 'read' },
        { table: 'invoices', access: 'write' },
      ],
    };
    const a = await uploadArtifact(env, org, org.chat.token, { content: appHtml(manifest) });
    const read = await manifestOf(a.artifactId).expect(200);
    expect(read.body).to.deep.include({
      declared: manifest,
      declaredSha256: manifestSha256(manifest as never),
    });
    const refused = await approve(a.artifactId).expect(400);
    expect(refused.body.error).to.deep.include({
      code: 'app_manifest_unresolved',
      details: { missingTables: ['invoices'], missingWorkflows: ['chn_reports'], ambiguousWorkflows: [] },
    });
    expect(refused.body.error.message).to.contain('invoices').and.contain('chn_reports');
    expect((await manifestOf(a.artifactId).expect(200)).body.approved).to.equal(null);

    // a missing table alone blocks approval too (no workflows declared at all)
    const tablesOnly = { workflows: [], tables: [{ table: 'invoices', access: 'read' }] };
    const b = await uploadArtifact(env, org, org.chat.token, { content: appHtml(tablesOnly) });
    const alone = await approve(b.artifactId).expect(400);
    expect(alone.body.error).to.deep.include({
      code: 'app_manifest_unresolved',
      details: { missingTables: ['invoices'], missingWorkflows: [], ambiguousWorkflows: [] },
    });
    expect((await manifestOf(b.artifactId).expect(200)).body.approved).to.equal(null);
  });

  it('approves what the HTML declares (never the body) for apps.manage only; a new version starts unapproved', async () => {
    await tableWithRows(env, org, 'orders', []);
    await tableWithRows(env, org, 'notes', []);
    const manifest = {
      workflows: [],
      tables: [
        { table: 'orders', access: 'read' },
        { table: 'notes', access: 'write' },
      ],
    };
    const a = await uploadArtifact(env, org, org.chat.token, { content: appHtml(manifest) });
    const v1 = a.currentVersion.versionId;
    expect((await approve(a.artifactId, undefined, org.chat.token).expect(403)).body.error.code).to.equal(
      'forbidden',
    );
    // the scope comes from the HTML only: a manifest in the body is not part of the contract
    await approve(a.artifactId, { manifest: { tables: [{ table: 'secrets', access: 'write' }] } }).expect(
      400,
    );
    const approved = await approve(a.artifactId).expect(200);
    expect(approved.body).to.deep.include({
      versionId: v1,
      artifactId: a.artifactId,
      organizationId: org.organizationId,
      manifest,
      manifestSha256: manifestSha256(manifest as never),
      workflowBindings: {},
      approvedBy: org.admin.userId,
    });
    expect(approved.body.approvedAt).to.be.a('string');
    const read = await manifestOf(a.artifactId).expect(200);
    expect(read.body.approved).to.deep.equal(approved.body);
    expect(read.body.declaredSha256).to.equal(approved.body.manifestSha256);
    const listed = await as(env, org.chat.token)
      .get(org.path(`/artifacts/${a.artifactId}`))
      .expect(200);
    expect(listed.body.artifact.currentVersionApproved).to.equal(true);
    // pinning and unpinning never change approval
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${a.artifactId}/pin`))
      .expect(200);
    await as(env, org.chat.token)
      .delete(org.path(`/artifacts/${a.artifactId}/pin`))
      .expect(200);
    expect((await manifestOf(a.artifactId).expect(200)).body.approved).to.deep.equal(approved.body);

    const next = await publish(env, org, org.chat.token, a.artifactId, appHtml(manifest));
    expect(next.currentVersionApproved).to.equal(false);
    const current = await manifestOf(a.artifactId).expect(200);
    expect(current.body).to.deep.include({ versionId: next.currentVersion.versionId, approved: null });
    expect(current.body.declared).to.deep.equal(manifest);
    const old = await manifestOf(a.artifactId, `?versionId=${v1}`).expect(200);
    expect(old.body.approved.versionId).to.equal(v1);
    // an older version can still be approved by id; the current one stays unapproved
    await approve(a.artifactId, { versionId: v1 }).expect(200);
    expect((await manifestOf(a.artifactId).expect(200)).body.approved).to.equal(null);
    await manifestOf(a.artifactId, '?versionId=ver_none').expect(invalidReference('versionId'));
    await approve(a.artifactId, { versionId: 'ver_none' }).expect(invalidReference('versionId'));
  });

  it('binds declared workflows through the workflow catalog and refuses ones it cannot run', async () => {
    const started: WorkflowStartRequest[] = [];
    const workflows: WorkflowCatalog = {
      resolve: onlyChnOk,
      start: (req) => {
        started.push(req);
        return Promise.resolve({ runId: 'run_1' });
      },
    };
    const services = createServices({ ...env.deps, workflows });
    const app = createApp({ ...env.deps, services, workflows });
    const put = (artifactId: string) =>
      request(app)
        .put(org.path(`/artifacts/${artifactId}/app-manifest`))
        .set('Authorization', `Bearer ${org.admin.token}`);
    const bad = await uploadArtifact(env, org, org.admin.token, {
      content: appHtml({ workflows: ['chn_ok', 'chn_draft'] }),
    });
    const refused = await put(bad.artifactId).expect(400);
    expect(refused.body.error.details).to.deep.equal({
      missingTables: [],
      missingWorkflows: ['chn_draft'],
      ambiguousWorkflows: [],
    });
    const good = await uploadArtifact(env, org, org.admin.token, {
      content: appHtml({ workflows: ['chn_ok'] }),
    });
    const approved = await put(good.artifactId).expect(200);
    expect(approved.body.workflowBindings).to.deep.equal({ chn_ok: 'chn_ok' });
    expect(approved.body.manifest).to.deep.equal({ workflows: ['chn_ok'], tables: [] });
    expect(started).to.deep.equal([]);
  });

  it('keeps manifests inside the organization', async () => {
    const a = await uploadArtifact(env, org, org.admin.token, { content: appHtml({ tables: [] }) });
    const other = await createTestOrg(env, 'Other Org');
    await as(env, other.owner.token)
      .get(other.path(`/artifacts/${a.artifactId}/app-manifest`))
      .expect(404);
    await as(env, other.owner.token)
      .put(other.path(`/artifacts/${a.artifactId}/app-manifest`))
      .expect(404);
    await as(env, other.owner.token)
      .get(org.path(`/artifacts/${a.artifactId}/app-manifest`))
      .expect(401);
    await as(env, other.owner.token)
      .put(org.path(`/artifacts/${a.artifactId}/app-manifest`))
      .expect(401);
    expect((await manifestOf(a.artifactId, '', org.admin.token).expect(200)).body.approved).to.equal(null);
  });

  // Issue 32: versionIds can be derived (tool artifacts' ver_<key>), so two artifacts may hold the same one.
  it("approves one artifact's version, never another artifact's version with the same versionId", async () => {
    await tableWithRows(env, org, 'orders', []);
    const manifest = { workflows: [], tables: [{ table: 'orders', access: 'read' }] };
    const versions = new ArtifactVersions(env.deps.repos, env.deps.objects, env.config.artifacts.maxBytes);
    /** An artifact of the library whose first version has the versionId given. */
    const withVersionId = async (versionId: string) => {
      const { doc } = await versions.create(
        org.organizationId,
        { artifactId: newId('art'), versionId },
        {
          name: 'Twin',
          scope: 'library',
          source: 'upload',
          conversationId: null,
          creatorUserId: org.chat.userId,
        },
        versions.decode({ contentType: 'text/html', content: appHtml(manifest) }),
        { createdBy: org.chat.userId },
      );
      return doc._id;
    };
    const a = await uploadArtifact(env, org, org.chat.token, { content: appHtml(manifest) });
    const shared = a.currentVersion.versionId;
    const b = await withVersionId(shared);
    await approve(a.artifactId).expect(200);
    expect((await manifestOf(b).expect(200)).body).to.deep.include({ versionId: shared, approved: null });
    const readB = await as(env, org.chat.token)
      .get(org.path(`/artifacts/${b}`))
      .expect(200);
    expect(readB.body.artifact.currentVersionApproved).to.equal(false);
    const listed = await as(env, org.chat.token).get(org.path('/artifacts?limit=100')).expect(200);
    const approvedById = Object.fromEntries(
      (listed.body.items as Array<{ artifactId: string; currentVersionApproved: boolean }>).map((i) => [
        i.artifactId,
        i.currentVersionApproved,
      ]),
    );
    expect(approvedById).to.include({ [a.artifactId]: true, [b]: false });
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${b}/pin`))
      .expect(200);
    const opened = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${b}/app-session`))
      .expect(201);
    expect(opened.body).to.include({ versionId: shared, approved: false });
    // approving B approves B, and leaves A's approval as it was
    await approve(b).expect(200);
    expect((await manifestOf(b).expect(200)).body.approved.artifactId).to.equal(b);
    expect((await manifestOf(a.artifactId).expect(200)).body.approved.artifactId).to.equal(a.artifactId);

    // An approval stored before approvals named their artifact in their id (its id the versionId alone)
    // still approves its own artifact's version, and only that.
    const c = await uploadArtifact(env, org, org.chat.token, { content: appHtml(manifest) });
    const d = await withVersionId(c.currentVersion.versionId);
    // eslint-disable-next-line no-restricted-syntax -- a record as an earlier release stored it, which no repository writes any more
    await env.deps.db.collection<{ _id: string; [field: string]: unknown }>('app_approvals').insertOne({
      _id: c.currentVersion.versionId,
      organizationId: org.organizationId,
      artifactId: c.artifactId,
      manifestWorkflows: [],
      manifestTables: [{ table: 'orders', access: 'read' }],
      manifestSha256: manifestSha256(manifest as never),
      workflowBindings: [],
      approvedBy: org.admin.userId,
      approvedAt: new Date(),
    });
    expect((await manifestOf(c.artifactId).expect(200)).body.approved).to.include({
      versionId: c.currentVersion.versionId,
      artifactId: c.artifactId,
    });
    expect((await manifestOf(d).expect(200)).body.approved).to.equal(null);
  });
});
