import { expect } from 'chai';
import type { AppSession } from '@lib/artifacts/app-runtime.service';
import { artifactsWorld, ctxOf, ORG, refusal, type ArtifactsWorld } from './artifacts-world';
import { API, appHtml, approvedApp, MANIFEST } from './app-fixture';

/*
 * The app bridge (docs/artifacts-and-apps.md, "Running an app"): each call is allowed only while the link's
 * version is the current version of the still pinned artifact, the member can still read it, and that version's
 * approved manifest declares the table (read for queries; write for inserts, which includes reading) or the
 * workflow. Links, tokens and the page: app-session.unit.test.ts.
 */
const alice = ctxOf('chat', 'usr_alice');
const bob = ctxOf('chat', 'usr_bob');
const admin = ctxOf('admin', 'usr_admin');

const scopeDenied = (message: string) => ({
  status: 403,
  code: 'app_scope_denied',
  message,
  details: undefined,
});
const page = { limit: 20, offset: 0 };

describe('app bridge', () => {
  let w: ArtifactsWorld;
  let id: string;
  let versionId: string;
  let session: AppSession;
  beforeEach(async () => {
    w = artifactsWorld();
    ({ id, versionId, session } = await approvedApp(w));
  });

  it('queries a declared table, read or write, as the member who opened the app', async () => {
    expect(await w.runtime.queryRows(session, 'orders', { ...page, filters: 'a=1' })).to.deep.equal({
      items: [{ id: 1 }],
      totalRows: 1,
      offset: 0,
    });
    await w.runtime.queryRows(session, 'notes', page);
    expect(w.tableCalls).to.deep.equal([
      { op: 'list', userId: 'usr_bob', table: 'orders', arg: { ...page, filters: 'a=1' } },
      { op: 'list', userId: 'usr_bob', table: 'notes', arg: page },
    ]);
  });

  it('inserts only into a table declared for write', async () => {
    expect(await w.runtime.insertRows(session, 'notes', [{ text: 'hi' }])).to.deep.include({ inserted: 1 });
    expect(await refusal(w.runtime.insertRows(session, 'orders', [{}]))).to.deep.equal(
      scopeDenied('the approved manifest declares table orders for read only'),
    );
    expect(w.tableCalls).to.deep.equal([
      { op: 'insert', userId: 'usr_bob', table: 'notes', arg: [{ text: 'hi' }] },
    ]);
  });

  it('refuses a table the manifest does not declare, though it exists', async () => {
    expect(await refusal(w.runtime.queryRows(session, 'secrets', page))).to.deep.equal(
      scopeDenied('the approved manifest does not declare table secrets'),
    );
    expect(await refusal(w.runtime.insertRows(session, 'secrets', [{}]))).to.deep.equal(
      scopeDenied('the approved manifest does not declare table secrets'),
    );
    expect(w.tableCalls).to.deep.equal([]);
  });

  it('starts the chain a declared workflow was bound to, for the app, version and request', async () => {
    const run = await w.runtime.runWorkflow(session, 'Weekly report', {
      input: { week: 3 },
      requestId: 'req_1',
    });
    expect(run).to.deep.equal({
      workflow: 'Weekly report',
      workflowId: 'chn_report',
      runId: 'run_1',
      requestId: 'req_1',
    });
    await w.runtime.runWorkflow(session, 'Weekly report', { requestId: 'req_2' });
    expect(w.started).to.deep.equal([
      {
        organizationId: ORG,
        workflowId: 'chn_report',
        input: { week: 3 },
        userId: 'usr_bob',
        requestId: 'req_1',
        trigger: { type: 'app', artifactId: id, versionId },
      },
      {
        organizationId: ORG,
        workflowId: 'chn_report',
        input: {},
        userId: 'usr_bob',
        requestId: 'req_2',
        trigger: { type: 'app', artifactId: id, versionId },
      },
    ]);
  });

  it('refuses an undeclared workflow, by id or name, and names inherited from Object', async () => {
    for (const workflow of ['chn_other', 'Other', 'chn_report', 'toString', '__proto__'])
      expect(await refusal(w.runtime.runWorkflow(session, workflow, { requestId: 'r' }))).to.deep.equal(
        scopeDenied(`the approved manifest does not declare workflow ${workflow}`),
      );
    expect(w.started).to.deep.equal([]);
  });

  it('stops every call once a newer version is published, until it is opened and approved again', async () => {
    await w.artifacts.publish(alice, id, { contentType: 'text/html', content: appHtml(MANIFEST, 'v2') });
    const changed = {
      status: 409,
      code: 'app_version_changed',
      message: 'a newer version of this app has been published since it was opened; open it again',
      details: undefined,
    };
    expect(await refusal(w.runtime.queryRows(session, 'orders', page))).to.deep.equal(changed);
    expect(await refusal(w.runtime.runWorkflow(session, 'Weekly report', { requestId: 'r' }))).to.deep.equal(
      changed,
    );
    const reopened = await w.runtime.open(bob, id, API);
    const fresh = await w.runtime.authenticate(new URL(reopened.url).searchParams.get('session')!, ORG, id);
    expect(fresh.versionId).to.not.equal(versionId);
    expect(await refusal(w.runtime.queryRows(fresh, 'orders', page))).to.deep.equal({
      status: 403,
      code: 'app_not_approved',
      message:
        'this version of the app has no approved manifest: an admin must approve it before it can use tables or workflows',
      details: undefined,
    });
    await w.manifests.approve(admin, id);
    expect((await w.runtime.queryRows(fresh, 'orders', page)).totalRows).to.equal(1);
    expect(w.tableCalls).to.have.length(1);
  });

  it('stops when the app is unpinned, or the member may no longer read it', async () => {
    await w.artifacts.share(alice, id, {});
    expect(await refusal(w.runtime.queryRows(session, 'orders', page))).to.deep.include({
      status: 404,
      message: 'artifact not found',
    });
    await w.artifacts.share(alice, id, { userIds: ['usr_bob'] });
    await w.artifacts.unpin(alice, id);
    const unpinned = {
      status: 409,
      code: 'app_not_pinned',
      message: 'the app was unpinned',
      details: undefined,
    };
    expect(await refusal(w.runtime.insertRows(session, 'notes', [{}]))).to.deep.equal(unpinned);
    expect(await refusal(w.runtime.runWorkflow(session, 'Weekly report', { requestId: 'r' }))).to.deep.equal(
      unpinned,
    );
    expect(await refusal(w.runtime.page(session, API))).to.deep.equal(unpinned);
    expect(w.tableCalls).to.deep.equal([]);
    expect(w.started).to.deep.equal([]);
  });
});
