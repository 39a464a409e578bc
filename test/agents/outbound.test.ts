import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp } from '@api/app';
import { BlockedAddressError, createOutboundClient, isPublicAddress } from '@lib/http/outbound';
import { createServices } from '@lib/services';
import { createTestAgent } from '@test/helpers/agents';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';

// The production default: private outbound refused (the shared test env allows it for its loopback helpers).
const guarded = () => createOutboundClient({ allowPrivate: false });

describe('the outbound guard (production default)', () => {
  let env: TestEnv;
  let org: TestOrg;
  let listener: Server;
  let hits: number;
  let port: number;

  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Outbound Org');
    hits = 0;
    listener = createServer((_req, res) => {
      hits++;
      res.end('reached');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as AddressInfo).port;
  });
  after(() => listener.close());

  it('classifies addresses: only ordinary unicast is public', () => {
    const refused = [
      '127.0.0.1',
      '::1',
      '::ffff:7f00:1', // ::ffff:127.0.0.1 as URL normalises it
      '::ffff:a9fe:a9fe', // ::ffff:169.254.169.254
      '169.254.169.254',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '198.18.0.1',
      '0.0.0.0',
      '::',
      '224.0.0.1',
      'ff02::1',
      'fd00::1',
      'fe80::1',
      '64:ff9b::a9fe:a9fe', // NAT64
      '2002:7f00:1::', // 6to4 of 127.0.0.1
      'not-an-address',
    ];
    for (const address of refused) expect(isPublicAddress(address), address).to.equal(false);
    for (const address of ['93.184.216.34', '2606:4700::1111', '::ffff:5db8:d822'])
      expect(isPublicAddress(address), address).to.equal(true);
  });

  it('never reaches a loopback listener, however the address is spelled', async () => {
    const outbound = guarded();
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', 'localhost', '0x7f.1']) {
      const url = `http://${host}:${port}/x`;
      await outbound.request(url, { method: 'GET' }, { timeoutMs: 2000, maxBodyBytes: 100 }).then(
        () => expect.fail(`${url} was requested`),
        (err: unknown) => expect(err, url).to.be.instanceOf(BlockedAddressError),
      );
    }
    expect(hits).to.equal(0);
    // Positive control: the same listener is reachable when private outbound is allowed.
    const open = createOutboundClient({ allowPrivate: true });
    const res = await open.request(
      `http://127.0.0.1:${port}/x`,
      { method: 'GET' },
      { timeoutMs: 2000, maxBodyBytes: 100 },
    );
    expect(res).to.include({ status: 200, body: 'reached' });
    expect(hits).to.equal(1);
  });

  it('checks the address it connects to: a name that re-resolves to loopback after the check is refused', async () => {
    let lookups = 0;
    const before = hits;
    // A rebinding name: public when checked, loopback when the connection would be made.
    const outbound = createOutboundClient({
      allowPrivate: false,
      resolve: () =>
        Promise.resolve([{ address: ++lookups === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }]),
    });
    const url = `http://rebind.example:${port}/x`;
    expect((await outbound.check(url)).hostname).to.equal('rebind.example');
    await outbound.request(url, { method: 'GET' }, { timeoutMs: 2000, maxBodyBytes: 100 }).then(
      () => expect.fail('connected to the rebound address'),
      (err: unknown) => expect(err).to.be.instanceOf(BlockedAddressError),
    );
    expect(lookups).to.equal(2);
    expect(hits).to.equal(before);
    await outbound.close();
  });

  it('refuses a private callbackUrl at the API with 400, before anything is stored', async () => {
    const outbound = guarded();
    const services = createServices({ ...env.deps, outbound });
    const app = createApp({ ...env.deps, services, outbound });
    const { agentId } = await createTestAgent(env, org.organizationId);
    const post = (callbackUrl: string) =>
      request(app)
        .post(org.path('/conversations'))
        .set('Authorization', `Bearer ${org.owner.token}`)
        .send({ agentId, title: 'cb', callbackUrl });
    for (const url of [
      `http://[::ffff:127.0.0.1]:${port}/cb`,
      'http://169.254.169.254/latest',
      'ftp://example.com/x',
    ]) {
      const res = await post(url).expect(400);
      expect(res.body.error.message, url).to.contain('callbackUrl refused');
    }
    const list = await request(app)
      .get(org.path('/conversations'))
      .set('Authorization', `Bearer ${org.owner.token}`)
      .expect(200);
    expect(list.body.totalRows).to.equal(0);
    await post('http://93.184.216.34/cb').expect(201);
  });
});
