import { expect } from 'chai';
import type { Server } from 'node:http';
import { existsSync } from 'node:fs';
import { workflowIds } from '@contracts';
import { BrowserPool } from '@lib/browser-sessions/browser-pool';
import { screenshotKey } from '@lib/browser-sessions/browser-sessions.service';
import { createOutboundClient } from '@lib/http/outbound';
import type { TestEnv } from '@test/helpers/env';
import { recordHistory } from '@test/helpers/histories';
import { as, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { useBrowserSuite } from '@test/conversations/browser-suite';
import { browserPids } from '@test/conversations/browser-site';

describe('browser sessions', function () {
  this.timeout(120_000);
  let secretHits = 0;
  const { suite, sessionsPath, browsingAgent, script, browserTask, list } = useBrowserSuite((url) => {
    if (url.pathname === '/secret') secretHits++;
  });
  let env: TestEnv;
  let org: TestOrg;
  let site: Server;
  let origin: string;
  let port: number;
  beforeEach(() => {
    ({ env, org, site, origin, port } = suite);
    secretHits = 0;
  });

  /** Stops the conversation's one session and waits until its Chromium has ended. */
  async function stopOnly(conversationId: string) {
    const [session] = await list(conversationId);
    await as(env, org.owner.token)
      .post(sessionsPath(conversationId, `/${session!.sessionId}/stop`))
      .expect(200);
    await eventually(() => browserPids(session!.sessionId).length === 0);
  }

  it('lets the agent browse a page: reads text, fills and clicks, stores a screenshot; the session is listed, stopped and its Chromium ends', async () => {
    const { agentId, model } = await browsingAgent();
    const results = script(model, [
      { action: 'navigate', url: `${origin}/` },
      { action: 'read_text' },
      { action: 'fill', selector: '#q', text: 'shoes' },
      { action: 'click', selector: '#go' },
      { action: 'read_text', selector: '#r' },
      { action: 'screenshot' },
    ]);
    const conversationId = await browserTask(agentId);

    const seen = results();
    expect(seen).to.have.length(6);
    for (const r of seen) expect(r, JSON.stringify(r)).to.include({ ok: true });
    expect(seen[1]!.text).to.contain('Welcome to the test shop');
    expect(seen[4]).to.include({ text: 'You searched for shoes', url: `${origin}/result?q=shoes` });
    const sessionId = seen[0]!.sessionId as string;
    expect(seen.every((r) => r.sessionId === sessionId)).to.equal(true);

    const [session, ...others] = await list(conversationId);
    expect(others).to.be.empty;
    expect(session).to.deep.include({
      sessionId,
      status: 'active',
      currentUrl: `${origin}/result?q=shoes`,
      owner: { type: 'conversation', conversationId },
    });
    expect(session!.screenshots).to.have.length(1);
    const shot = session!.screenshots[0]!;
    expect(shot.screenshotId).to.equal(seen[5]!.screenshotId);
    // The PNG is in S3, and the record's link downloads it.
    expect(
      await env.deps.objects.size(screenshotKey(org.organizationId, sessionId, shot.screenshotId)),
    ).to.be.above(100);
    const png = Buffer.from(await (await fetch(shot.downloadUrl)).arrayBuffer());
    expect(png.subarray(1, 4).toString()).to.equal('PNG');

    const pids = browserPids(sessionId);
    expect(pids).to.not.be.empty;
    const stopped = await as(env, org.owner.token)
      .post(sessionsPath(conversationId, `/${sessionId}/stop`))
      .expect(200);
    expect(stopped.body).to.include({ sessionId, status: 'stopped', endReason: 'stopped' });
    await eventually(() => browserPids(sessionId).length === 0);
    // …and the processes are gone (reaped), not just their command lines.
    await eventually(() => pids.every((pid) => !existsSync(`/proc/${pid}`)));
    // Stopping again changes nothing.
    const again = await as(env, org.owner.token)
      .post(sessionsPath(conversationId, `/${sessionId}/stop`))
      .expect(200);
    expect(again.body).to.include({ status: 'stopped' });
    expect((await list(conversationId))[0]).to.include({ status: 'stopped' });
    await recordHistory(env, workflowIds.browserSession(org.organizationId, sessionId), 'browser-session');
  });

  it('refuses navigation off the allow-list, redirects included, without reaching the other host', async () => {
    const { agentId, model } = await browsingAgent();
    const results = script(model, [
      { action: 'navigate', url: `http://localhost:${port}/secret` },
      { action: 'navigate', url: `${origin}/redirect` },
      { action: 'navigate', url: 'file:///etc/passwd' },
    ]);
    const conversationId = await browserTask(agentId);
    const [offList, redirected, file] = results();
    expect(offList).to.include({ ok: false });
    expect(offList!.error).to.contain('not on the allow-list');
    expect(redirected).to.include({ ok: false });
    expect(redirected!.error).to.contain('localhost is not on the allow-list');
    expect(file).to.include({ ok: false });
    expect(secretHits).to.equal(0);
    await stopOnly(conversationId);
  });

  it('reads a wildcard entry as subdomains only: *.localhost does not reach localhost itself', async () => {
    const hitsBefore = secretHits;
    const { agentId, model } = await browsingAgent(['*.localhost']);
    const results = script(model, [{ action: 'navigate', url: `http://localhost:${port}/secret` }]);
    const conversationId = await browserTask(agentId);
    const [bare] = results();
    expect(bare).to.include({ ok: false });
    expect(bare!.error).to.contain('localhost is not on the allow-list');
    expect(secretHits).to.equal(hitsBefore);
    await stopOnly(conversationId);
  });

  it('with the production address guard, refuses a private address and a name that resolves to one', async () => {
    const outbound = createOutboundClient({
      allowPrivate: false,
      resolve: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
    });
    const pool = new BrowserPool('unused-queue', {
      ...env.config.browser,
      outbound,
      logger: env.deps.logger,
    });
    const sessionId = `bws_guard_${Date.now()}`;
    try {
      await pool.open(sessionId);
      let hits = 0;
      site.once('request', () => hits++);
      const literal = await pool
        .act(sessionId, { action: 'navigate', url: `${origin}/` }, ['127.0.0.1'])
        .catch((e: Error) => e);
      expect(literal).to.be.instanceOf(Error);
      expect((literal as Error).message).to.contain('private or reserved');
      const named = await pool
        .act(sessionId, { action: 'navigate', url: `http://shop.example:${port}/` }, ['shop.example'])
        .catch((e: Error) => e);
      expect((named as Error).message).to.contain('resolves to a private or reserved address');
      expect(hits).to.equal(0);
    } finally {
      await pool.closeAll();
      await outbound.close();
    }
    expect(browserPids(sessionId)).to.be.empty;
  });
});
