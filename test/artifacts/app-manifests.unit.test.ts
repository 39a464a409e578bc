import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { appHtml } from './app-fixture';
import { artifactsWorld, ctxOf, ORG, OTHER_ORG, refusal, type ArtifactsWorld } from './artifacts-world';

/*
 * App manifests (docs/artifacts-and-apps.md, "App manifests"): read from the version's bytes on every call;
 * approval checks that every table exists and every workflow exists and can run (400 app_manifest_unresolved
 * naming them), binds each workflow to its chain id and belongs to that one version.
 */
const alice = ctxOf('chat', 'usr_alice');
const admin = ctxOf('admin', 'usr_admin');

describe('app manifests', () => {
  let w: ArtifactsWorld;
  const upload = async (content: string, contentType = 'text/html') =>
    (await w.artifacts.upload(alice, { name: 'App', contentType, content })).artifact;
  beforeEach(() => {
    w = artifactsWorld({ maxBytes: 5000 });
    w.tableNames.push([ORG, 'orders'], [ORG, 'notes'], [OTHER_ORG, 'ledger']);
    w.chains.push(
      { organizationId: ORG, id: 'chn_report', name: 'Weekly report', runnable: true },
      { organizationId: ORG, id: 'chn_off', name: 'Disabled', runnable: false },
      { organizationId: ORG, id: 'chn_d1', name: 'Dup', runnable: true },
      { organizationId: ORG, id: 'chn_d2', name: 'Dup', runnable: true },
      { organizationId: ORG, id: 'chn_e1', name: 'Echo', runnable: true },
      { organizationId: ORG, id: 'chn_e2', name: 'Echo', runnable: true },
      { organizationId: OTHER_ORG, id: 'chn_theirs', name: 'Theirs', runnable: true },
    );
  });

  it('approves a version: its manifest, its canonical hash and its workflow bindings', async () => {
    const manifest = {
      workflows: ['Weekly report', 'chn_d1'],
      tables: [{ table: 'orders', access: 'write' }],
    };
    const artifact = await upload(appHtml(manifest));
    const approved = await w.manifests.approve(admin, artifact.artifactId);
    const canonical =
      '{"workflows":["Weekly report","chn_d1"],"tables":[{"table":"orders","access":"write"}]}';
    expect(approved).to.deep.include({
      versionId: artifact.currentVersion.versionId,
      artifactId: artifact.artifactId,
      organizationId: ORG,
      manifest,
      manifestSha256: createHash('sha256').update(canonical).digest('hex'),
      workflowBindings: { 'Weekly report': 'chn_report', chn_d1: 'chn_d1' },
      approvedBy: 'usr_admin',
    });
    expect(approved.approvedAt).to.be.a('string');
    const read = await w.manifests.get(alice, artifact.artifactId);
    expect(read).to.deep.equal({
      versionId: artifact.currentVersion.versionId,
      declared: manifest,
      declaredSha256: approved.manifestSha256,
      declaredError: null,
      approved,
    });
    expect((await w.artifacts.get(alice, artifact.artifactId)).artifact.currentVersionApproved).to.equal(
      true,
    );
  });

  it('approves tables alone without asking the workflow catalog', async () => {
    const artifact = await upload(appHtml({ tables: [{ table: 'notes', access: 'read' }] }));
    const approved = await w.manifests.approve(admin, artifact.artifactId);
    expect(approved.workflowBindings).to.deep.equal({});
    expect(w.resolveCalls).to.deep.equal([]);
  });

  it('blocks on missing tables, naming them', async () => {
    const artifact = await upload(
      appHtml({
        tables: [
          { table: 'orders', access: 'read' },
          { table: 'ledger', access: 'read' },
          { table: 'gone', access: 'write' },
        ],
      }),
    );
    expect(await refusal(w.manifests.approve(admin, artifact.artifactId))).to.deep.equal({
      status: 400,
      code: 'app_manifest_unresolved',
      message: 'the manifest cannot be approved; it declares tables that do not exist: ledger, gone',
      details: { missingTables: ['ledger', 'gone'], missingWorkflows: [], ambiguousWorkflows: [] },
    });
    expect(w.approvalDocs.size).to.equal(0);
  });

  it('blocks on missing or disabled workflows, naming them', async () => {
    const artifact = await upload(
      appHtml({ workflows: ['Weekly report', 'Disabled', 'Theirs', 'chn_nope'] }),
    );
    expect(await refusal(w.manifests.approve(admin, artifact.artifactId))).to.deep.equal({
      status: 400,
      code: 'app_manifest_unresolved',
      message:
        'the manifest cannot be approved; it declares workflows that do not exist or cannot run: Disabled, Theirs, chn_nope',
      details: {
        missingTables: [],
        missingWorkflows: ['Disabled', 'Theirs', 'chn_nope'],
        ambiguousWorkflows: [],
      },
    });
    expect(w.approvalDocs.size).to.equal(0);
  });

  it('blocks on a name several workflows share, and names every problem at once', async () => {
    const only = await upload(appHtml({ workflows: ['Dup', 'Echo'] }));
    expect(await refusal(w.manifests.approve(admin, only.artifactId))).to.deep.include({
      message:
        'the manifest cannot be approved; it declares workflow names shared by several workflows (declare their ids): Dup, Echo',
      details: { missingTables: [], missingWorkflows: [], ambiguousWorkflows: ['Dup', 'Echo'] },
    });
    const all = await upload(
      appHtml({ workflows: ['Dup', 'nope'], tables: [{ table: 'gone', access: 'read' }] }),
    );
    expect(await refusal(w.manifests.approve(admin, all.artifactId))).to.deep.include({
      message:
        'the manifest cannot be approved; it declares tables that do not exist: gone; workflows that do not exist or cannot run: nope; workflow names shared by several workflows (declare their ids): Dup',
    });
  });

  it('refuses a page without a manifest, one not HTML, and a broken manifest', async () => {
    const plain = await upload('<h1>plain</h1>');
    expect(await refusal(w.manifests.approve(admin, plain.artifactId))).to.deep.equal({
      status: 400,
      code: 'app_manifest_absent',
      message:
        'version 1 declares no app manifest: its HTML embeds no service.manifest.ts (<script type="text/plain" data-file="service.manifest.ts">)',
      details: undefined,
    });
    await w.artifacts.publish(alice, plain.artifactId, { contentType: 'text/plain', content: 'x' });
    expect(await refusal(w.manifests.approve(admin, plain.artifactId))).to.deep.include({
      code: 'app_manifest_absent',
      message: 'version 2 declares no app manifest: it is text/plain, not an HTML app',
    });
    const broken = await upload(appHtml({ views: [] }));
    expect(await refusal(w.manifests.approve(admin, broken.artifactId))).to.deep.equal({
      status: 400,
      code: 'app_manifest_invalid_shape',
      message: 'unknown manifest keys: views (allowed: workflows, tables)',
      details: undefined,
    });
    expect(await w.manifests.get(alice, broken.artifactId)).to.deep.include({
      declared: null,
      declaredSha256: null,
      declaredError: 'app_manifest_invalid_shape',
      approved: null,
    });
  });

  it('reads no manifest from a version that is not HTML, even if its bytes hold one', async () => {
    const text = await upload(appHtml({ tables: [] }), 'text/plain');
    expect(await w.manifests.get(alice, text.artifactId)).to.deep.equal({
      versionId: text.currentVersion.versionId,
      declared: null,
      declaredSha256: null,
      declaredError: null,
      approved: null,
    });
  });

  it('approves the version named, leaving the current one unapproved', async () => {
    const first = await upload(appHtml({ tables: [{ table: 'orders', access: 'read' }] }));
    const v1 = first.currentVersion.versionId;
    await w.artifacts.publish(alice, first.artifactId, {
      contentType: 'text/html',
      content: appHtml({ tables: [] }),
    });
    const approved = await w.manifests.approve(admin, first.artifactId, v1);
    expect(approved).to.deep.include({ versionId: v1 });
    expect(await w.manifests.get(alice, first.artifactId, v1)).to.deep.include({ versionId: v1, approved });
    expect(await w.manifests.get(alice, first.artifactId)).to.deep.include({
      declared: { workflows: [], tables: [] },
      approved: null,
    });
    expect(await refusal(w.manifests.approve(admin, first.artifactId, 'ver_nope'))).to.deep.include({
      status: 400,
      code: 'invalid_reference',
    });
    // a member who cannot read the artifact cannot reach its manifest either
    expect(await refusal(w.manifests.get(ctxOf('chat', 'usr_bob'), first.artifactId))).to.deep.include({
      status: 404,
      message: 'artifact not found',
    });
  });
});
