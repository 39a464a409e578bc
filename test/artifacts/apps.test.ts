import { expect } from 'chai';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createApp } from '@api/app';
import type { WorkflowCatalog, WorkflowStartRequest } from '@lib/artifacts/workflow-catalog';
import { createLogger } from '@lib/logger';
import { createServices } from '@lib/services';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, addMember, createTestOrg, type TestOrg } from '@test/helpers/org';
import { appHtml, onlyChnOk, publish, tableWithRows, uploadArtifact } from '@test/helpers/artifacts';

const MANIFEST = {
  workflows: ['chn_ok'],
  tables: [
    { table: 'leads', access: 'read' },
    { table: 'notes', access: 'write' },
  ],
};

describe('apps: sandboxed pages and the window.service bridge', () => {
  let env: TestEnv;
  let org: TestOrg;
  let started: WorkflowStartRequest[];
  let app: ReturnType<typeof createApp>;

  before(async () => {
    env = await testEnv();
    started = [];
    // A stand-in catalog (chn_ok exists and runs); the one over real chains is tested in chain-apps.test.ts.
    const workflows: WorkflowCatalog = {
      resolve: onlyChnOk,
      start: (req) => {
        started.push(req);
        return Promise.resolve({ runId: `run_${started.length}` });
      },
    };
    app = createApp({ ...env.deps, services: createServices({ ...env.deps, workflows }), workflows });
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Apps Org');
    await tableWithRows(env, org, 'leads', ['Ada', 'Grace']);
    await tableWithRows(env, org, 'notes', []);
    await tableWithRows(env, org, 'secrets', ['s3cret']);
  });

  const caller = (token: string) => ({
    get: (url: string) => request(app).get(url).set('Authorization', `Bearer ${token}`),
    post: (url: string, body?: object) =>
      request(app).post(url).set('Authorization', `Bearer ${token}`).send(body),
    put: (url: string, body?: object) =>
      request(app).put(url).set('Authorization', `Bearer ${token}`).send(body),
    delete: (url: string) => request(app).delete(url).set('Authorization', `Bearer ${token}`),
  });

  /** A pinned app made by the chat member (approved by the admin unless told otherwise), opened by `token`. */
  async function openedApp(opts: { approve?: boolean; token?: string; manifest?: object } = {}) {
    const a = await uploadArtifact(env, org, org.chat.token, {
      name: 'Leads app',
      content: appHtml(opts.manifest ?? MANIFEST, '<h1>Leads</h1>'),
    });
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${a.artifactId}/pin`))
      .expect(200);
    if (opts.approve !== false)
      await caller(org.admin.token)
        .put(org.path(`/artifacts/${a.artifactId}/app-manifest`))
        .expect(200);
    const opened = await caller(opts.token ?? org.chat.token)
      .post(org.path(`/artifacts/${a.artifactId}/app-session`))
      .expect(201);
    const url = new URL(opened.body.url as string);
    const token = url.searchParams.get('session')!;
    const bridge = (path: string) => org.path(`/artifacts/${a.artifactId}/app${path}`);
    return { artifact: a, opened: opened.body, pagePath: url.pathname + url.search, token, bridge };
  }

  it('opens only pinned HTML artifacts, with a link to the version that is current', async () => {
    const a = await uploadArtifact(env, org, org.chat.token, { content: appHtml(MANIFEST) });
    const unpinned = await caller(org.chat.token)
      .post(org.path(`/artifacts/${a.artifactId}/app-session`))
      .expect(409);
    expect(unpinned.body.error.code).to.equal('app_not_pinned');
    const { opened, artifact } = await openedApp({ approve: false });
    expect(opened).to.deep.include({
      artifactId: artifact.artifactId,
      versionId: artifact.currentVersion.versionId,
      approved: false,
    });
    expect(opened.url).to.match(
      new RegExp(
        `^${env.config.publicBaseUrl}/orgs/${org.organizationId}/artifacts/${artifact.artifactId}/app\\?session=`,
      ),
    );
    await publish(env, org, org.chat.token, artifact.artifactId, 'plain text', 'text/plain');
    await caller(org.chat.token)
      .post(org.path(`/artifacts/${artifact.artifactId}/app-session`))
      .expect(400);
    // a member who cannot read the artifact cannot open it
    const other = await addMember(env, org.organizationId, 'chat', 'Other');
    await caller(other.token)
      .post(org.path(`/artifacts/${artifact.artifactId}/app-session`))
      .expect(404);
  });

  it('serves the page with its bridge under a sandboxing policy, to the link only', async () => {
    const { pagePath, token, artifact } = await openedApp();
    const res = await request(app).get(pagePath).expect(200);
    expect(res.headers['content-type']).to.equal('text/html; charset=utf-8');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).to.contain('sandbox allow-scripts allow-forms allow-modals allow-downloads');
    expect(csp).to.not.contain('allow-same-origin');
    expect(csp)
      .to.contain("default-src 'none'")
      .and.contain(`connect-src ${new URL(env.config.publicBaseUrl).origin}`);
    expect(csp).to.contain("frame-ancestors 'self'");
    expect(res.headers).to.deep.include({
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    expect(res.headers['access-control-allow-origin']).to.equal(undefined);
    expect(res.text).to.match(/^<!doctype html><script>\(\(\) => \{/);
    expect(res.text).to.contain('<h1>Leads</h1>').and.contain(JSON.stringify(token));
    const path = org.path(`/artifacts/${artifact.artifactId}/app`);
    await request(app).get(path).expect(401);
    await request(app).get(`${path}?session=nonsense`).expect(401);
    // the member's own session token is not an app link, and an app link is not a session
    await request(app).get(`${path}?session=${org.chat.token}`).expect(401);
    await request(app).get(org.path('/artifacts')).set('Authorization', `Bearer ${token}`).expect(401);
    // a link is for one app
    const second = await openedApp();
    await request(app).get(`${path}?session=${second.token}`).expect(401);
  });

  it('allows bridge calls only by the approved manifest of the current version, with the declared access', async () => {
    const { token, bridge, artifact } = await openedApp({ approve: false });
    const bridgeAs = caller(token);
    const notApproved = await bridgeAs.get(bridge('/tables/leads/rows')).expect(403);
    expect(notApproved.body.error.code).to.equal('app_not_approved');
    await caller(org.admin.token)
      .put(org.path(`/artifacts/${artifact.artifactId}/app-manifest`))
      .expect(200);

    const rows = await bridgeAs.get(bridge('/tables/leads/rows?orderBy=title:desc&limit=1')).expect(200);
    expect(rows.body).to.deep.include({ totalRows: 2, offset: 0 });
    expect(rows.body.items.map((r: { title: string }) => r.title)).to.deep.equal(['Grace']);
    const denied = (res: request.Response, text: string) => {
      expect(res.status, JSON.stringify(res.body)).to.equal(403);
      expect(res.body.error.code).to.equal('app_scope_denied');
      expect(res.body.error.message).to.contain(text);
    };
    denied(await bridgeAs.get(bridge('/tables/secrets/rows')), 'does not declare table secrets');
    denied(await bridgeAs.post(bridge('/tables/leads/rows'), { rows: [{ title: 'x' }] }), 'read only');
    denied(
      await bridgeAs.post(bridge('/workflows/chn_other/runs'), {}),
      'does not declare workflow chn_other',
    );
    const inserted = await bridgeAs.post(bridge('/tables/notes/rows'), {
      rows: [{ title: 'hi' }, { nope: 1 }],
    });
    expect(inserted.status).to.equal(200);
    expect(inserted.body).to.deep.include({ inserted: 1, failed: 1 });
    // write includes read
    const notes = await bridgeAs.get(bridge('/tables/notes/rows')).expect(200);
    expect(notes.body.items.map((r: { title: string }) => r.title)).to.deep.equal(['hi']);
    // the chat member could not write rows themselves: the approval is the grant
    await as(env, org.chat.token)
      .post(org.path('/tables/notes/data'), { data: { title: 'x' } })
      .expect(403);

    const run = await bridgeAs
      .post(bridge('/workflows/chn_ok/runs'), { input: { n: 1 }, requestId: 'r-1' })
      .expect(202);
    expect(run.body).to.deep.equal({
      workflow: 'chn_ok',
      workflowId: 'chn_ok',
      runId: `run_${started.length}`,
      requestId: 'r-1',
    });
    expect(started[started.length - 1]).to.deep.equal({
      organizationId: org.organizationId,
      workflowId: 'chn_ok',
      input: { n: 1 },
      userId: org.chat.userId,
      requestId: 'r-1',
      trigger: { type: 'app', artifactId: artifact.artifactId, versionId: artifact.currentVersion.versionId },
    });

    // a new version: the open app is refused until it is opened again (and the new version approved)
    await publish(env, org, org.chat.token, artifact.artifactId, appHtml(MANIFEST, '<h1>v2</h1>'));
    const changed = await bridgeAs.get(bridge('/tables/leads/rows')).expect(409);
    expect(changed.body.error.code).to.equal('app_version_changed');
    const reopened = await caller(org.chat.token)
      .post(org.path(`/artifacts/${artifact.artifactId}/app-session`))
      .expect(201);
    expect(reopened.body.approved).to.equal(false);
    const fresh = new URL(reopened.body.url as string).searchParams.get('session')!;
    expect((await caller(fresh).get(bridge('/tables/leads/rows')).expect(403)).body.error.code).to.equal(
      'app_not_approved',
    );
    await caller(org.chat.token)
      .delete(org.path(`/artifacts/${artifact.artifactId}/pin`))
      .expect(200);
    expect((await caller(fresh).get(bridge('/tables/leads/rows')).expect(409)).body.error.code).to.equal(
      'app_not_pinned',
    );
    await request(app)
      .get(org.path(`/artifacts/${artifact.artifactId}/app?session=${fresh}`))
      .expect(409);
  });

  it('follows the member: access lost or membership ended refuses the open app', async () => {
    const other = await addMember(env, org.organizationId, 'chat', 'Viewer');
    const a = await uploadArtifact(env, org, org.chat.token, { content: appHtml(MANIFEST) });
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${a.artifactId}/pin`))
      .expect(200);
    await caller(org.admin.token)
      .put(org.path(`/artifacts/${a.artifactId}/app-manifest`))
      .expect(200);
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${a.artifactId}/share`), { userIds: [other.userId] })
      .expect(200);
    const opened = await caller(other.token)
      .post(org.path(`/artifacts/${a.artifactId}/app-session`))
      .expect(201);
    const token = new URL(opened.body.url as string).searchParams.get('session')!;
    const rows = org.path(`/artifacts/${a.artifactId}/app/tables/leads/rows`);
    await caller(token).get(rows).expect(200);
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${a.artifactId}/share`), {})
      .expect(200);
    await caller(token).get(rows).expect(404);
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${a.artifactId}/share`), { userIds: [other.userId] })
      .expect(200);
    await caller(token).get(rows).expect(200);
    await as(env, org.owner.token)
      .delete(org.path(`/users/${other.userId}`))
      .expect(200);
    await caller(token).get(rows).expect(401);
  });

  it('answers the sandboxed page’s cross-origin calls (CORS), and only on the bridge', async () => {
    const { bridge, token } = await openedApp();
    const preflight = await request(app)
      .options(bridge('/tables/leads/rows'))
      .set('Origin', 'null')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'authorization')
      .expect(204);
    expect(preflight.headers).to.deep.include({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'Authorization, Content-Type',
    });
    const res = await caller(token).get(bridge('/tables/leads/rows')).set('Origin', 'null').expect(200);
    expect(res.headers['access-control-allow-origin']).to.equal('*');
    // refusals are readable by the page too
    const refused = await caller(token).get(bridge('/tables/secrets/rows')).set('Origin', 'null').expect(403);
    expect(refused.headers['access-control-allow-origin']).to.equal('*');
    const plain = await as(env, org.chat.token).get(org.path('/artifacts')).set('Origin', 'null').expect(200);
    expect(plain.headers['access-control-allow-origin']).to.equal(undefined);
    const options = await request(app).options(org.path('/artifacts')).set('Origin', 'null');
    expect(options.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('keeps apps inside the organization', async () => {
    const { artifact, token, bridge, pagePath } = await openedApp();
    const other = await createTestOrg(env, 'Other Apps Org');
    await tableWithRows(env, other, 'leads', ['theirs']);
    const theirs = (suffix: string) => other.path(`/artifacts/${artifact.artifactId}${suffix}`);
    await caller(other.owner.token).post(theirs('/app-session')).expect(404);
    await request(app)
      .get(`${theirs('/app')}?session=${token}`)
      .expect(401);
    await caller(token).get(theirs('/app/tables/leads/rows')).expect(401);
    await caller(token).post(theirs('/app/workflows/chn_ok/runs'), {}).expect(401);
    await caller(other.owner.token).get(bridge('/tables/leads/rows')).expect(401);
    await caller(other.owner.token)
      .post(org.path(`/artifacts/${artifact.artifactId}/app-session`))
      .expect(401);
    await request(app).get(pagePath).expect(200);
  });

  it('never logs the app link’s token', async () => {
    const { pagePath, token, bridge } = await openedApp();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logged = createApp({ ...env.deps, logger: createLogger('info', {}, sink) });
    await request(logged).get(pagePath).expect(200);
    await request(logged)
      .get(bridge('/tables/leads/rows'))
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    const text = lines.join('\n');
    // The page's line names its route, not its URL (whose query holds the token).
    expect(text).to.contain('GET /orgs/{organizationId}/artifacts/{artifactId}/app 200');
    expect(text).to.not.contain(token);
  });
});
