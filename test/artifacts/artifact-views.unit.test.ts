import { expect } from 'chai';
import { appContentSecurityPolicy, bridgeScript, withBridge } from '@lib/artifacts/app-page';
import type { AppApprovalDoc } from '@lib/artifacts/app-approval.schema';
import type { ArtifactDoc } from '@lib/artifacts/artifact.schema';
import { currentVersion, toApprovalView, toArtifactView } from '@lib/artifacts/views';

/*
 * What the API shows of artifacts and approvals (the spec's Artifact and ApprovedAppManifest), and the served
 * app page (docs/artifacts-and-apps.md, "Running an app"): the bridge first, the sandbox policy word for word.
 */
const at = new Date('2026-01-02T03:04:05.000Z');
const version = (versionId: string, n: number) => ({
  versionId,
  version: n,
  contentType: 'text/html',
  sizeBytes: n,
  sha256: `sha${n}`,
  key: `k${n}`,
  createdBy: 'usr_a',
  createdAt: at,
});
const artifact = (fields: Partial<ArtifactDoc> = {}) =>
  ({
    _id: 'art_1',
    organizationId: 'org_1',
    name: 'App',
    scope: 'library',
    source: 'upload',
    creatorUserId: 'usr_a',
    versions: [version('ver_1', 1), version('ver_2', 2)],
    versionCount: 2,
    currentVersionId: 'ver_1',
    contentType: 'text/html',
    sharedUserIds: ['usr_b'],
    sharedGroupIds: [],
    createdAt: at,
    updatedAt: at,
    ...fields,
  }) as unknown as ArtifactDoc;

describe('artifact views', () => {
  it('shows an artifact with nulls for what it lacks, and its versions only when asked', () => {
    const view = toArtifactView(artifact(), { approved: true });
    expect(view).to.deep.equal({
      artifactId: 'art_1',
      organizationId: 'org_1',
      name: 'App',
      scope: 'library',
      source: 'upload',
      conversationId: null,
      chainRunId: null,
      actionChainId: null,
      creatorUserId: 'usr_a',
      contentType: 'text/html',
      versionCount: 2,
      currentVersion: {
        versionId: 'ver_1',
        version: 1,
        contentType: 'text/html',
        sizeBytes: 1,
        sha256: 'sha1',
        createdBy: 'usr_a',
        agentId: null,
        createdAt: '2026-01-02T03:04:05.000Z',
      },
      currentVersionApproved: true,
      pinnedAt: null,
      pinPosition: null,
      sharedWith: { userIds: ['usr_b'], groupIds: [] },
      promotedAt: null,
      promotedBy: null,
      createdAt: '2026-01-02T03:04:05.000Z',
      updatedAt: '2026-01-02T03:04:05.000Z',
    });
    const full = toArtifactView(artifact({ pinPosition: 0, pinnedAt: at }), {
      approved: false,
      withVersions: true,
    });
    expect(full.versions!.map((v) => v.versionId)).to.deep.equal(['ver_1', 'ver_2']);
    expect(full).to.deep.include({ pinPosition: 0, pinnedAt: '2026-01-02T03:04:05.000Z' });
  });

  it('takes the last version as current when the record names none of them', () => {
    expect(currentVersion(artifact({ currentVersionId: 'ver_gone' })).versionId).to.equal('ver_2');
  });

  it('shows an approval with its bindings as a map, an old one keyed by its versionId alone', () => {
    const approval = {
      _id: 'ver_9',
      versionId: null,
      artifactId: 'art_1',
      organizationId: 'org_1',
      manifestWorkflows: ['Report'],
      manifestTables: [{ table: 'orders', access: 'read' }],
      manifestSha256: 'abc',
      workflowBindings: [{ workflow: 'Report', workflowId: 'chn_1' }],
      approvedBy: 'usr_admin',
      approvedAt: at,
    } as unknown as AppApprovalDoc;
    expect(toApprovalView(approval)).to.deep.equal({
      versionId: 'ver_9',
      artifactId: 'art_1',
      organizationId: 'org_1',
      manifest: { workflows: ['Report'], tables: [{ table: 'orders', access: 'read' }] },
      manifestSha256: 'abc',
      workflowBindings: { Report: 'chn_1' },
      approvedBy: 'usr_admin',
      approvedAt: '2026-01-02T03:04:05.000Z',
    });
    expect(toApprovalView({ ...approval, _id: 'art_1/ver_3', versionId: 'ver_3' }).versionId).to.equal(
      'ver_3',
    );
  });
});

describe('served app page', () => {
  it('sandboxes the page with the documented policy, word for word', () => {
    expect(appContentSecurityPolicy('https://api.test', 'https://portal.test')).to.equal(
      "sandbox allow-scripts allow-forms allow-modals allow-downloads; default-src 'none'; " +
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; " +
        "media-src data: blob:; connect-src https://api.test; form-action 'none'; base-uri 'none'; " +
        "frame-src 'none'; worker-src 'none'; object-src 'none'; frame-ancestors https://portal.test",
    );
  });

  it('places the bridge after a leading doctype, byte-order mark and spaces included', () => {
    expect(withBridge('\uFEFF \n<!doctype html ><p>', '<s>')).to.equal('\uFEFF \n<!doctype html ><s><p>');
    expect(withBridge('<p><!doctype html>', '<s>')).to.equal('<s><p><!doctype html>');
  });

  it('embeds the base, token and manifest as script-safe JSON', () => {
    const script = bridgeScript({
      appApiBase: 'https://api.test/orgs/o/artifacts/a/app',
      token: 'tok.en',
      manifest: { workflows: ['a>b\u2028c\u2029d'], tables: [{ table: 'orders', access: 'read' }] },
    });
    expect(script).to.include('const base = "https://api.test/orgs/o/artifacts/a/app";');
    expect(script).to.include('const token = "tok.en";');
    expect(script).to.include(
      'manifest: Object.freeze({"workflows":["a\\u003eb\\u2028c\\u2029d"],"tables":[{"table":"orders","access":"read"}]})',
    );
    expect(bridgeScript({ appApiBase: 'b', token: 't', manifest: null })).to.include(
      'manifest: Object.freeze(null)',
    );
  });

  it('calls only the app’s own table and workflow paths with the token', () => {
    const script = bridgeScript({ appApiBase: 'b', token: 't', manifest: null });
    for (const part of [
      "Authorization: 'Bearer ' + token",
      "call('GET', '/tables/' + seg(table) + '/rows' + (qs ? '?' + qs : ''))",
      "call('POST', '/tables/' + seg(table) + '/rows', { rows: Array.isArray(rows) ? rows : [rows] })",
      "call('POST', '/workflows/' + seg(workflowId) + '/runs', { input })",
      "for (const k of ['filters', 'orderBy', 'limit', 'offset'])",
      "Object.defineProperty(window, 'service', { value: service, enumerable: true });",
    ])
      expect(script, part).to.include(part);
  });
});
