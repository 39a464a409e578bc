import { expect } from 'chai';
import { createPageGuard, type GuardState } from '@lib/browser-sessions/page-guard';
import { BlockedAddressError } from '@lib/http/outbound';
import {
  fakeRoute,
  guarded,
  LIMITS,
  offList,
  ok,
  okPage,
  scriptedOutbound,
  type PageRequest,
  type Sent,
} from '@test/conversations/page-guard-fakes';

/*
 * The guard every request of a browse session's Chromium goes through (docs/agents.md "Browser sessions"): a
 * navigation must be on the action's allow-list, any other request may go anywhere the guarded outbound client
 * reaches; the request is made by that client with the page's headers, less those it sets itself, within 30 s and
 * 20 MiB, and the page is given the response less the headers the client has decoded. A refusal aborts the request
 * as blocked by the client and says why; any other failure fails it. Redirects: page-guard-redirects.unit.test.ts.
 */

describe('browser page guard', () => {
  it('hands a navigation on the allow-list the response as it came, less the headers the client has decoded', async () => {
    const r = await guarded(
      { url: 'https://shop.example.org/a', navigation: true, headers: { accept: 'text/html' } },
      {
        'https://shop.example.org/a': {
          status: 200,
          headers: {
            'content-type': 'text/html',
            'content-encoding': 'gzip',
            'content-length': '5',
            'transfer-encoding': 'chunked',
            connection: 'keep-alive',
            'x-frame-options': 'DENY',
          },
          body: 'hello',
        },
      },
    );
    expect(r.sent).to.deep.equal([
      {
        url: 'https://shop.example.org/a',
        method: 'GET',
        headers: { accept: 'text/html' },
        body: undefined,
        limits: { timeoutMs: 30_000, maxBodyBytes: 20_971_520 },
      },
    ]);
    expect(r.fulfilled).to.deep.equal([
      {
        status: 200,
        headers: { 'content-type': 'text/html', 'x-frame-options': 'DENY' },
        body: Buffer.from('hello'),
      },
    ]);
    expect(r.aborted).to.deep.equal([]);
    expect(r.lastRefusal).to.equal(null);
  });

  it('refuses a navigation off the allow-list with the reason, blocked by the client, and asks nothing', async () => {
    const r = await guarded({ url: 'https://evil.example.net/x', navigation: true }, {}, [
      'shop.example.org',
    ]);
    expect(r.aborted).to.deep.equal(['blockedbyclient']);
    expect(r.lastRefusal).to.equal('evil.example.net is not on the allow-list of the browse tool');
    expect(r.sent).to.deep.equal([]);
    expect(r.fulfilled).to.deep.equal([]);
  });

  it('lets a subresource off the allow-list through the guarded client', async () => {
    const r = await guarded(
      { url: 'https://cdn.example.net/app.js' },
      { 'https://cdn.example.net/app.js': ok },
    );
    expect(r.sent.map((s) => s.url)).to.deep.equal(['https://cdn.example.net/app.js']);
    expect(r.fulfilled).to.deep.equal([okPage]);
    expect(r.aborted).to.deep.equal([]);
    expect(r.lastRefusal).to.equal(null);
  });

  it("refuses a URL the outbound client will not parse with the parser's message, navigation or not", async () => {
    const cases: [PageRequest, string][] = [
      [{ url: 'not a url', navigation: true }, "'not a url' is not an absolute URL"],
      [{ url: 'ftp://files.example.org/a' }, 'ftp: URLs are not allowed'],
      [{ url: 'http://127.0.0.1:8080/admin' }, '127.0.0.1 is a private or reserved address'],
      [{ url: 'http://[::1]/', navigation: true }, '[::1] is a private or reserved address'],
    ];
    for (const [request, reason] of cases) {
      const r = await guarded(request, {}, ['shop.example.org', '127.0.0.1', '::1']);
      expect(r.lastRefusal, request.url).to.equal(reason);
      expect(r.aborted, request.url).to.deep.equal(['blockedbyclient']);
      expect(r.sent, request.url).to.deep.equal([]);
    }
  });

  it("sends the page's headers without HTTP/2 pseudo-headers and those the client sets itself, in any case", async () => {
    const r = await guarded(
      {
        url: 'https://shop.example.org/style.css',
        headers: {
          ':method': 'GET',
          ':authority': 'shop.example.org',
          ':path': '/style.css',
          Host: 'shop.example.org',
          connection: 'keep-alive',
          'Content-Length': '0',
          'keep-alive': 'timeout=5',
          'Transfer-Encoding': 'chunked',
          'proxy-connection': 'keep-alive',
          Upgrade: 'h2c',
          accept: 'text/css',
          'User-Agent': 'Chromium',
          'x-time:': 'kept',
        },
      },
      { 'https://shop.example.org/style.css': ok },
    );
    expect(r.sent.map((s) => s.headers)).to.deep.equal([
      { accept: 'text/css', 'User-Agent': 'Chromium', 'x-time:': 'kept' },
    ]);
  });

  it('sends the body of a form post as it is', async () => {
    const r = await guarded(
      { url: 'https://shop.example.org/search', navigation: true, method: 'POST', body: 'q=shoes' },
      { 'https://shop.example.org/search': ok },
    );
    expect(r.sent).to.deep.equal([
      {
        url: 'https://shop.example.org/search',
        method: 'POST',
        headers: {},
        body: 'q=shoes',
        limits: LIMITS,
      },
    ]);
    expect(r.fulfilled).to.deep.equal([okPage]);
  });
});

describe('browser page guard: failures', () => {
  it('refuses a response larger than the limit, naming the URL of the hop', async () => {
    const r = await guarded(
      { url: 'https://shop.example.org/file', navigation: true },
      {
        'https://shop.example.org/file': { status: 302, headers: { location: '/big.iso' } },
        'https://shop.example.org/big.iso': { status: 200, body: 'partial', truncated: true },
      },
    );
    expect(r.lastRefusal).to.equal(
      'the response of https://shop.example.org/big.iso is larger than the limit',
    );
    expect(r.aborted).to.deep.equal(['blockedbyclient']);
    expect(r.fulfilled).to.deep.equal([]);
  });

  it('refuses a request the client blocks at connect time with its message; any other error fails the request', async () => {
    const blocked = await guarded(
      { url: 'https://internal.example.org/' },
      {
        'https://internal.example.org/': new BlockedAddressError(
          'internal.example.org resolves to a private or reserved address',
        ),
      },
    );
    expect(blocked.lastRefusal).to.equal('internal.example.org resolves to a private or reserved address');
    expect(blocked.aborted).to.deep.equal(['blockedbyclient']);

    const failed = await guarded(
      { url: 'https://shop.example.org/slow' },
      { 'https://shop.example.org/slow': new Error('The operation was aborted due to timeout') },
    );
    expect(failed.aborted).to.deep.equal(['failed']);
    expect(failed.lastRefusal).to.equal(null);
    expect(failed.fulfilled).to.deep.equal([]);
  });

  it('sets the last refusal on each refusal, and leaves it alone on success', async () => {
    const state: GuardState = { allowedHosts: ['shop.example.org'], lastRefusal: null };
    const sent: Sent[] = [];
    const fulfilled: unknown[] = [];
    const guard = createPageGuard(scriptedOutbound({ 'https://shop.example.org/': ok }, sent), state);
    const navigate = (url: string) => guard(fakeRoute({ url, navigation: true }, [], fulfilled));
    await navigate('https://a.example.net/');
    expect(state.lastRefusal).to.equal(offList('a.example.net'));
    await navigate('https://shop.example.org/');
    expect(fulfilled).to.deep.equal([okPage]);
    expect(state.lastRefusal).to.equal(offList('a.example.net'));
    await navigate('https://b.example.net/');
    expect(state.lastRefusal).to.equal(offList('b.example.net'));
    expect(sent.map((s) => s.url)).to.deep.equal(['https://shop.example.org/']);
  });
});
