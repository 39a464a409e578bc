import { expect } from 'chai';
import { guarded, LIMITS, offList, ok, okPage, type Scripted } from '@test/conversations/page-guard-fakes';

/*
 * Playwright does not route the requests of a redirect, so the browser page guard follows them itself: each hop of
 * a navigation must be on the allow-list (a subresource may be sent anywhere the guarded client reaches), a 303,
 * and a 301 or 302 after a POST, become a GET without a body (307 and 308 keep both), at most 10 redirects are
 * followed, and the page gets the last response with the cookies every hop set.
 */

describe('browser page guard: redirects', () => {
  it('follows a navigation redirected on the allow-list, a relative Location against the hop it came from', async () => {
    const r = await guarded(
      { url: 'https://shop.example.org/old/page', navigation: true, headers: { accept: 'text/html' } },
      {
        'https://shop.example.org/old/page': { status: 302, headers: { location: '../new/page?x=1' } },
        'https://shop.example.org/new/page?x=1': {
          status: 301,
          headers: { location: 'https://www.example.org/' },
        },
        'https://www.example.org/': ok,
      },
      ['shop.example.org', '*.example.org'],
    );
    expect(r.sent).to.deep.equal([
      {
        url: 'https://shop.example.org/old/page',
        method: 'GET',
        headers: { accept: 'text/html' },
        body: undefined,
        limits: LIMITS,
      },
      {
        url: 'https://shop.example.org/new/page?x=1',
        method: 'GET',
        headers: { accept: 'text/html' },
        body: undefined,
        limits: LIMITS,
      },
      {
        url: 'https://www.example.org/',
        method: 'GET',
        headers: { accept: 'text/html' },
        body: undefined,
        limits: LIMITS,
      },
    ]);
    expect(r.fulfilled).to.deep.equal([okPage]);
    expect(r.lastRefusal).to.equal(null);
  });

  it('refuses a navigation redirected off the allow-list, and does not ask the host it was sent to', async () => {
    const r = await guarded(
      { url: 'https://shop.example.org/go', navigation: true },
      {
        'https://shop.example.org/go': {
          status: 307,
          headers: { location: 'https://evil.example.net/landing' },
        },
        'https://evil.example.net/landing': ok,
      },
    );
    expect(r.sent.map((s) => s.url)).to.deep.equal(['https://shop.example.org/go']);
    expect(r.lastRefusal).to.equal(offList('evil.example.net'));
    expect(r.aborted).to.deep.equal(['blockedbyclient']);
    expect(r.fulfilled).to.deep.equal([]);
  });

  it('follows a subresource redirected to a host off the allow-list', async () => {
    const r = await guarded(
      { url: 'https://shop.example.org/logo.png' },
      {
        'https://shop.example.org/logo.png': {
          status: 302,
          headers: { location: 'https://cdn.example.net/logo.png' },
        },
        'https://cdn.example.net/logo.png': {
          status: 200,
          headers: { 'content-type': 'image/png' },
          body: 'PNG',
        },
      },
    );
    expect(r.sent.map((s) => s.url)).to.deep.equal([
      'https://shop.example.org/logo.png',
      'https://cdn.example.net/logo.png',
    ]);
    expect(r.fulfilled).to.deep.equal([
      { status: 200, headers: { 'content-type': 'image/png' }, body: Buffer.from('PNG') },
    ]);
    expect(r.lastRefusal).to.equal(null);
  });

  it("carries the site's cookies and credentials only within its origin, and body headers only with a body", async () => {
    const r = await guarded(
      {
        url: 'https://shop.example.org/login',
        method: 'POST',
        body: 'user=ann',
        headers: {
          cookie: 'session=s3cret',
          Authorization: 'Basic YW5uOnB3',
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'text/html',
        },
      },
      {
        // the site's own redirect after the form post, then an open redirect to another host
        'https://shop.example.org/login': { status: 303, headers: { location: '/next?to=elsewhere' } },
        'https://shop.example.org/next?to=elsewhere': {
          status: 302,
          headers: { location: 'https://collector.example.net/x' },
        },
        'https://collector.example.net/x': ok,
      },
    );
    expect(r.sent.map((s) => [s.url, s.method, s.headers])).to.deep.equal([
      [
        'https://shop.example.org/login',
        'POST',
        {
          cookie: 'session=s3cret',
          Authorization: 'Basic YW5uOnB3',
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'text/html',
        },
      ],
      [
        'https://shop.example.org/next?to=elsewhere',
        'GET',
        { cookie: 'session=s3cret', Authorization: 'Basic YW5uOnB3', accept: 'text/html' },
      ],
      ['https://collector.example.net/x', 'GET', { accept: 'text/html' }],
    ]);
  });

  it("refuses a redirect to a private address or another scheme with the parser's message", async () => {
    for (const [location, reason] of [
      ['http://10.0.0.1/metadata', '10.0.0.1 is a private or reserved address'],
      ['file:///etc/passwd', 'file: URLs are not allowed'],
    ]) {
      const r = await guarded(
        { url: 'https://shop.example.org/img' },
        { 'https://shop.example.org/img': { status: 302, headers: { location: location! } } },
      );
      expect(
        r.sent.map((s) => s.url),
        location,
      ).to.deep.equal(['https://shop.example.org/img']);
      expect(r.lastRefusal, location).to.equal(reason);
      expect(r.aborted, location).to.deep.equal(['blockedbyclient']);
    }
  });

  it('turns a 303, and a 301 or 302 after a POST, into a GET without a body; 307 and 308 keep method and body', async () => {
    // [status, method of the first request, method and body of the second]
    const cases: [number, string, string, string | undefined][] = [
      [303, 'POST', 'GET', undefined],
      [303, 'PUT', 'GET', undefined],
      [301, 'POST', 'GET', undefined],
      [302, 'POST', 'GET', undefined],
      [301, 'PUT', 'PUT', 'a=1'],
      [302, 'DELETE', 'DELETE', 'a=1'],
      [307, 'POST', 'POST', 'a=1'],
      [308, 'POST', 'POST', 'a=1'],
      [308, 'PUT', 'PUT', 'a=1'],
    ];
    for (const [status, method, nextMethod, nextBody] of cases) {
      const label = `${status} after ${method}`;
      const r = await guarded(
        { url: 'https://shop.example.org/form', navigation: true, method, body: 'a=1' },
        {
          'https://shop.example.org/form': { status, headers: { location: '/done' } },
          'https://shop.example.org/done': ok,
        },
      );
      expect(
        r.sent.map((s) => [s.url, s.method, s.body]),
        label,
      ).to.deep.equal([
        ['https://shop.example.org/form', method, 'a=1'],
        ['https://shop.example.org/done', nextMethod, nextBody],
      ]);
      expect(r.fulfilled, label).to.deep.equal([okPage]);
    }
  });

  it('gives the page the cookies every hop set, in order, with the last response', async () => {
    const r = await guarded(
      { url: 'https://shop.example.org/login', navigation: true },
      {
        'https://shop.example.org/login': {
          status: 302,
          headers: { location: '/a', 'set-cookie': 'sid=1; Path=/' },
        },
        'https://shop.example.org/a': { status: 302, headers: { location: '/b' } },
        'https://shop.example.org/b': {
          status: 303,
          headers: { location: '/home', 'set-cookie': 'a=2\nb=3; Secure' },
        },
        'https://shop.example.org/home': {
          status: 200,
          headers: { 'content-type': 'text/html', 'set-cookie': 'c=4' },
        },
      },
    );
    expect(r.fulfilled).to.deep.equal([
      {
        status: 200,
        headers: { 'content-type': 'text/html', 'set-cookie': 'sid=1; Path=/\na=2\nb=3; Secure\nc=4' },
        body: Buffer.from(''),
      },
    ]);
  });

  it('follows at most 10 redirects and hands the 11th response to the page as it is', async () => {
    const script: Record<string, Scripted> = {};
    for (let i = 0; i <= 11; i++)
      script[`https://shop.example.org/r${i}`] = {
        status: 302,
        headers: { location: `/r${i + 1}`, 'set-cookie': `n=${i}` },
      };
    const r = await guarded({ url: 'https://shop.example.org/r0', navigation: true }, script);
    expect(r.sent.map((s) => s.url)).to.deep.equal(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `https://shop.example.org/r${i}`),
    );
    expect(r.fulfilled).to.deep.equal([
      {
        status: 302,
        headers: {
          location: '/r11',
          'set-cookie': 'n=0\nn=1\nn=2\nn=3\nn=4\nn=5\nn=6\nn=7\nn=8\nn=9\nn=10',
        },
        body: Buffer.from(''),
      },
    ]);
  });

  it('hands a 3xx without a Location, and a Location on a status that is no redirect, to the page as they are', async () => {
    const responses: { status: number; headers: Record<string, string> }[] = [
      { status: 304, headers: { location: '/elsewhere', etag: '"v1"' } },
      { status: 302, headers: { etag: '"v2"' } },
      { status: 201, headers: { location: '/items/7' } },
    ];
    for (const response of responses) {
      const r = await guarded(
        { url: 'https://shop.example.org/x', navigation: true },
        { 'https://shop.example.org/x': response },
      );
      expect(r.sent.length, String(response.status)).to.equal(1);
      expect(r.fulfilled, String(response.status)).to.deep.equal([{ ...response, body: Buffer.from('') }]);
    }
  });
});
