import { expect } from 'chai';
import { artifactsWorld, ctxOf, ORG, OTHER_ORG, refusal, type ArtifactsWorld } from './artifacts-world';
import { appHtml, approvedApp, MANIFEST } from './app-fixture';
import { decodeJwt } from 'jose';

/*
 * Opening an app (docs/artifacts-and-apps.md, "Running an app"): pinned HTML only; the link's token names the
 * member, the artifact and the version, works only on that app's path, and only while its member is one.
 */
const alice = ctxOf('chat', 'usr_alice');
const bob = ctxOf('chat', 'usr_bob');
const API = 'https://api.test:8443';
const html = (content: string) => ({ name: 'App', contentType: 'text/html', content });

describe('app sessions', () => {
  let w: ArtifactsWorld;
  beforeEach(() => {
    w = artifactsWorld();
    w.members[ORG] = { usr_alice: 'chat', usr_bob: 'chat' };
  });

  it('opens the current version of a pinned HTML artifact with a link to its own app path', async () => {
    const { artifact } = await w.artifacts.upload(alice, html('<p>hi</p>'));
    const id = artifact.artifactId;
    await w.artifacts.pin(alice, id);
    const link = await w.runtime.open(alice, id, API);
    const url = new URL(link.url);
    expect(`${url.origin}${url.pathname}`).to.equal(`${API}/orgs/org_a/artifacts/${id}/app`);
    expect(link).to.deep.include({
      artifactId: id,
      versionId: artifact.currentVersion.versionId,
      approved: false,
    });
    const claims = await w.tokens.verifyAppSession(url.searchParams.get('session')!);
    expect(claims).to.deep.include({
      organizationId: ORG,
      userId: 'usr_alice',
      artifactId: id,
      versionId: artifact.currentVersion.versionId,
    });
    // valid for the configured 600 s
    expect(Date.parse(link.expiresAt)).to.equal(claims.expiresAt.getTime());
    const { iat, exp } = decodeJwt(url.searchParams.get('session')!);
    expect(exp! - iat!).to.equal(600);
  });

  it('says whether the opened version is approved', async () => {
    const { id } = await approvedApp(w);
    expect((await w.runtime.open(bob, id, API)).approved).to.equal(true);
  });

  it('refuses an unpinned artifact, one no longer HTML, and one the member cannot read', async () => {
    const { artifact } = await w.artifacts.upload(alice, html('<p>hi</p>'));
    const id = artifact.artifactId;
    expect(await refusal(w.runtime.open(alice, id, API))).to.deep.equal({
      status: 409,
      code: 'app_not_pinned',
      message: 'pin the artifact to run it as an app',
      details: undefined,
    });
    await w.artifacts.pin(alice, id);
    expect(await refusal(w.runtime.open(bob, id, API))).to.deep.include({ status: 404 });
    await w.artifacts.publish(alice, id, { contentType: 'text/plain', content: 'x' });
    expect(await refusal(w.runtime.open(alice, id, API))).to.deep.equal({
      status: 400,
      code: 'validation_failed',
      message: 'only HTML artifacts run as apps; this one is text/plain',
      details: undefined,
    });
  });

  it('accepts a link only on its own app, while its member is one', async () => {
    const { id, session } = await approvedApp(w);
    const unauthorized = (message: string) => ({
      status: 401,
      code: 'unauthorized',
      message,
      details: undefined,
    });
    expect(session).to.deep.include({ artifactId: id });
    expect(session.ctx).to.deep.include({ organizationId: ORG, userId: 'usr_bob', role: 'chat', via: 'app' });
    expect(await refusal(w.runtime.authenticate(session.token, ORG, 'art_other'))).to.deep.equal(
      unauthorized('the app link is for another app'),
    );
    expect(await refusal(w.runtime.authenticate(session.token, OTHER_ORG, id))).to.deep.equal(
      unauthorized('the app link is for another app'),
    );
    expect(await refusal(w.runtime.authenticate('not-a-token', ORG, id))).to.deep.equal(
      unauthorized('the app link is invalid'),
    );
    delete w.members[ORG]!.usr_bob;
    expect(await refusal(w.runtime.authenticate(session.token, ORG, id))).to.deep.equal(
      unauthorized('the member who opened this app is no longer in the organization'),
    );
  });

  it('serves the link’s version with the bridge first and the sandbox policy', async () => {
    const { id, session } = await approvedApp(w);
    const served = await w.runtime.page(session, `${API}/v1`);
    const manifest = MANIFEST;
    const original = appHtml(manifest);
    expect(served.html.startsWith('<!doctype html><script>(() => {')).to.equal(true);
    expect(served.html.endsWith(original.slice('<!doctype html>'.length))).to.equal(true);
    expect(served.html).to.include(`const base = "${API}/v1/orgs/org_a/artifacts/${id}/app";`);
    expect(served.html).to.include(`const token = "${session.token}";`);
    expect(served.html).to.include(`manifest: Object.freeze(${JSON.stringify(manifest)})`);
    expect(served.contentSecurityPolicy).to.include(`connect-src ${API}; `);
    expect(served.contentSecurityPolicy.endsWith("; frame-ancestors 'self'")).to.equal(true);
    // a newer version does not change what an open link serves
    await w.artifacts.publish(ctxOf('chat', 'usr_alice'), id, {
      contentType: 'text/html',
      content: '<p>v2</p>',
    });
    expect((await w.runtime.page(session, API)).html).to.include('<h1>App</h1>');
  });
});
