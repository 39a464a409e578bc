import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  assertPublicUrl,
  BlockedAddressError,
  createOutboundClient,
  parseOutboundUrl,
  type Resolver,
} from '@lib/http/outbound';

function blocked(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(BlockedAddressError);
    return (err as Error).message;
  }
  return expect.fail('not blocked');
}

const resolvesTo =
  (...addresses: string[]): Resolver =>
  () =>
    Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));

describe('outbound URLs', () => {
  it('takes only absolute http(s) URLs', () => {
    expect(blocked(() => parseOutboundUrl('/relative', true))).to.equal("'/relative' is not an absolute URL");
    expect(blocked(() => parseOutboundUrl('file:///etc/passwd', true))).to.equal(
      'file: URLs are not allowed',
    );
    expect(blocked(() => parseOutboundUrl('ftp://example.com/', true))).to.equal('ftp: URLs are not allowed');
    expect(parseOutboundUrl('https://example.com/a?b=1', false).href).to.equal('https://example.com/a?b=1');
    expect(parseOutboundUrl('http://example.com/', false).protocol).to.equal('http:');
  });

  it('refuses private IP literals, bracketed IPv6 included, unless private outbound is allowed', () => {
    expect(blocked(() => parseOutboundUrl('http://10.0.0.1/', false))).to.equal(
      '10.0.0.1 is a private or reserved address',
    );
    expect(blocked(() => parseOutboundUrl('http://[fd00::1]:8080/', false))).to.equal(
      '[fd00::1] is a private or reserved address',
    );
    expect(parseOutboundUrl('http://10.0.0.1/', true).hostname).to.equal('10.0.0.1');
    expect(parseOutboundUrl('http://[2606:4700::1111]/', false).hostname).to.equal('[2606:4700::1111]');
    // A name is not resolved here: it is checked when connecting.
    expect(parseOutboundUrl('http://internal.example/', false).hostname).to.equal('internal.example');
  });

  it('checks every address a name resolves to, before any connection', async () => {
    const check = (resolve: Resolver, allowPrivate = false) =>
      assertPublicUrl('http://svc.example/x', allowPrivate, resolve);
    expect((await check(resolvesTo('93.184.216.34', '2606:4700::1111'))).hostname).to.equal('svc.example');
    const refused = await check(resolvesTo('93.184.216.34', '10.0.0.7')).then(
      () => expect.fail('allowed'),
      (err: Error) => err,
    );
    expect(refused).to.be.instanceOf(BlockedAddressError);
    expect(refused.message).to.equal('svc.example resolves to a private or reserved address');
    let asked = false;
    const spy: Resolver = () => {
      asked = true;
      return resolvesTo('10.0.0.7')('');
    };
    expect((await check(spy, true)).hostname).to.equal('svc.example');
    await assertPublicUrl('http://93.184.216.34/', false, spy);
    expect(asked, 'no DNS when private outbound is allowed or the host is a literal').to.equal(false);
  });
});

describe('the outbound client', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ method?: string; header?: string; body: string }> = [];
  const paths: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      paths.push(req.url ?? '');
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, header: req.headers['x-test'] as string | undefined, body });
        if (req.url === '/redirect') {
          res.writeHead(302, { location: '/elsewhere' }).end();
        } else if (req.url === '/slow') {
          setTimeout(() => res.end('late'), 2000);
        } else {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('x'.repeat(3000));
          res.end('y'.repeat(3000));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const client = createOutboundClient({ allowPrivate: true });
  after(() => client.close());

  it('sends the method, headers and body, and reads at most maxBodyBytes of the answer', async () => {
    const whole = await client.request(
      `${base}/big`,
      { method: 'POST', headers: { 'x-test': 'yes' }, body: 'payload' },
      { timeoutMs: 5000, maxBodyBytes: 10_000 },
    );
    expect(whole).to.deep.equal({
      status: 200,
      contentType: 'text/plain',
      body: 'x'.repeat(3000) + 'y'.repeat(3000),
      truncated: false,
    });
    expect(seen.at(-1)).to.deep.equal({ method: 'POST', header: 'yes', body: 'payload' });
    const capped = await client.request(
      `${base}/big`,
      { method: 'GET' },
      { timeoutMs: 5000, maxBodyBytes: 100 },
    );
    expect(capped.body).to.equal('x'.repeat(100));
    expect(capped.truncated).to.equal(true);
    const exact = await client.request(
      `${base}/big`,
      { method: 'GET' },
      { timeoutMs: 5000, maxBodyBytes: 6000 },
    );
    expect(exact.truncated).to.equal(false);
    expect(exact.body).to.have.length(6000);
  });

  it('does not follow redirects, and gives up after timeoutMs', async () => {
    const redirect = await client.request(
      `${base}/redirect`,
      { method: 'GET' },
      { timeoutMs: 5000, maxBodyBytes: 100 },
    );
    expect(redirect.status).to.equal(302);
    expect(paths).to.include('/redirect').and.not.include('/elsewhere');
    const err = await client
      .request(`${base}/slow`, { method: 'GET' }, { timeoutMs: 200, maxBodyBytes: 100 })
      .then(
        () => expect.fail('answered'),
        (e: Error) => e,
      );
    expect(err.name).to.equal('TimeoutError');
  });

  it('refuses a name resolving to a private address when connecting, and says why', async () => {
    const guarded = createOutboundClient({ allowPrivate: false, resolve: resolvesTo('127.0.0.1') });
    const port = new URL(base).port;
    const before = seen.length;
    const err = await guarded
      .request(`http://svc.example:${port}/big`, { method: 'GET' }, { timeoutMs: 2000, maxBodyBytes: 100 })
      .then(
        () => expect.fail('connected'),
        (e: Error) => e,
      );
    expect(err).to.be.instanceOf(BlockedAddressError);
    expect(err.message).to.equal('svc.example resolves to a private or reserved address');
    expect(seen.length).to.equal(before);
    await guarded.close();
  });
});
