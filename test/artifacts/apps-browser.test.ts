import { expect } from 'chai';
import { mkdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createApp } from '@api/app';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { appHtml, tableWithRows, uploadArtifact } from '@test/helpers/artifacts';
import { ROOT } from '@test/helpers/paths';

/** Where the screenshot of the running app is kept (ignored by git). */
const ARTIFACTS_DIR = process.env.TEST_ARTIFACTS_DIR ?? join(ROOT, '.data', 'test-artifacts');

/** The app: lists the leads through the bridge, tries a workflow it was not approved for, and tries to reach
 * another origin. Each outcome is written into the page for the browser test to read. */
const APP_BODY = `
<h1>Leads</h1>
<ul id="rows"></ul>
<p id="workflow">pending</p>
<p id="origin"></p>
<p id="external">pending</p>
<p id="violations"></p>
<script>
  const out = (id, text) => { document.getElementById(id).textContent = text; };
  out('origin', 'origin:' + self.origin);
  document.addEventListener('securitypolicyviolation', (e) => {
    document.getElementById('violations').textContent += e.effectiveDirective + ' ';
  });
  (async () => {
    const rows = document.getElementById('rows');
    try {
      const page = await window.service.tables.query('leads', { orderBy: 'title:asc' });
      for (const row of page.items) {
        const li = document.createElement('li');
        li.textContent = row.title;
        rows.appendChild(li);
      }
      rows.dataset.done = 'rows';
    } catch (e) {
      rows.dataset.done = 'error:' + e.code;
    }
    try {
      await window.service.workflows.run('chn_not_approved', {});
      out('workflow', 'ran');
    } catch (e) {
      out('workflow', 'refused:' + e.status + ':' + e.code);
    }
    try {
      await fetch(document.body.dataset.elsewhere);
      out('external', 'reached');
    } catch (e) {
      out('external', 'blocked');
    }
  })();
</script>`;

describe('apps in a real browser (headless Chromium)', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let org: TestOrg;
  let server: Server;
  let elsewhere: Server;
  let elsewhereHits: number;
  let browser: Browser;
  let baseUrl: string;

  before(async () => {
    env = await testEnv();
    // The API on a real port, with PUBLIC_BASE_URL pointing at it (the bridge and the CSP name that origin).
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on('request', createApp({ ...env.deps, config: { ...env.config, publicBaseUrl: baseUrl } }));
    elsewhereHits = 0;
    elsewhere = createServer((_req, res) => {
      elsewhereHits++;
      res.setHeader('access-control-allow-origin', '*');
      res.end('secret');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      // root in a container: Chromium's own sandbox needs user namespaces it may not have
      args: ['--no-sandbox'],
    });
  });
  after(async () => {
    await browser?.close();
    server?.close();
    elsewhere?.close();
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Browser Org');
  });

  it('runs a pinned app: an approved table read gets rows, an unapproved workflow is refused, nothing else is reached', async () => {
    await tableWithRows(env, org, 'leads', ['Grace Hopper', 'Ada Lovelace']);
    const elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/steal`;
    const html = appHtml({ workflows: [], tables: [{ table: 'leads', access: 'read' }] }, APP_BODY).replace(
      '<body>',
      `<body data-elsewhere="${elsewhereUrl}">`,
    );
    const artifact = await uploadArtifact(env, org, org.chat.token, { name: 'Leads', content: html });
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${artifact.artifactId}/pin`))
      .expect(200);
    await as(env, org.admin.token)
      .put(org.path(`/artifacts/${artifact.artifactId}/app-manifest`))
      .expect(200);
    const opened = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${artifact.artifactId}/app-session`))
      .expect(201);
    const url = (opened.body.url as string).replace(env.config.publicBaseUrl, baseUrl);

    const page = await browser.newPage();
    const response = await page.goto(url);
    expect(response?.status()).to.equal(200);
    await page.waitForSelector('#rows[data-done]');
    // (strings: they run in the page, which this file's TypeScript does not describe)
    await page.waitForFunction("document.getElementById('workflow').textContent !== 'pending'");
    await page.waitForFunction("document.getElementById('external').textContent !== 'pending'");

    expect(await page.getAttribute('#rows', 'data-done')).to.equal('rows');
    expect(await page.locator('#rows li').allTextContents()).to.deep.equal(['Ada Lovelace', 'Grace Hopper']);
    expect(await page.textContent('#workflow')).to.equal('refused:403:app_scope_denied');
    // the CSP sandbox: an opaque origin of its own, and no address but the API's
    expect(await page.textContent('#origin')).to.equal('origin:null');
    expect(await page.textContent('#external')).to.equal('blocked');
    expect(await page.textContent('#violations')).to.contain('connect-src');
    expect(elsewhereHits).to.equal(0);

    mkdirSync(ARTIFACTS_DIR, { recursive: true });
    const shot = join(ARTIFACTS_DIR, 'app-in-browser.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).to.be.greaterThan(1000);
    await page.close();
  });
});
