import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { createToolActivities } from '@activities/tools';
import {
  assertPublicUrl,
  BlockedAddressError,
  createOutboundClient,
  type Resolver,
} from '@lib/http/outbound';
import { createLogger } from '@lib/logger';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';

type RunToolInput = Parameters<ReturnType<typeof createToolActivities>['runTool']>[0];

describe('agent server tools', () => {
  let env: TestEnv;
  let org: TestOrg;
  let server: Server;
  let hits: string[];
  let bodies: string[];

  before(async () => {
    env = await testEnv();
    hits = [];
    bodies = [];
    server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url} ${String(req.headers['x-api-key'] ?? '')}`);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(`${req.method} ${Buffer.concat(chunks).toString()}`);
        // /empty answers 204 No Content; /text/<n> n characters of text; anything else a small JSON body.
        if (req.url === '/empty') {
          res.statusCode = 204;
          res.end();
          return;
        }
        const size = /^\/text\/(\d+)$/.exec(req.url ?? '')?.[1];
        res.setHeader('content-type', size ? 'text/plain' : 'application/json');
        res.end(size ? 'x'.repeat(Number(size)) : '{"pong":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(() => server.close());
  beforeEach(async () => {
    org = await createTestOrg(env, 'Tools Org');
  });

  const activitiesFor = (allowPrivate: boolean, resolve?: Resolver) =>
    createToolActivities({
      repos: env.deps.repos,
      tables: env.deps.services.tables,
      taskPlans: env.deps.services.taskPlans,
      artifacts: env.deps.services.toolArtifacts,
      browserSessions: env.deps.services.browserSessions,
      knowledge: env.deps.services.kbSearch,
      outbound: createOutboundClient({ allowPrivate, resolve }),
      realtime: { emit: () => undefined },
      logger: createLogger('silent'),
    });

  /** Attaches the tools of `configs` to a fresh agent and runs one call of tool `name` as that agent. */
  const run = async (
    configs: Record<string, Record<string, unknown>>,
    name: string,
    args: object,
    allowPrivate = true,
    resolve?: Resolver,
  ) => {
    const agentId = `agt_${randomBytes(6).toString('hex')}`;
    const tools = env.deps.repos.tenant(org.organizationId).toolAttachments;
    for (const [code, config] of Object.entries(configs)) await tools.create(agentId, code, config);
    const activities = activitiesFor(allowPrivate, resolve);
    const call = { id: 'c1', name, arguments: JSON.stringify(args) };
    const runTool = (input: RunToolInput) => activities.runTool(input);
    const result: unknown = await new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(
      runTool,
      { organizationId: org.organizationId, agentId, requestId: 'r1', call },
    );
    return String(result);
  };

  it('queries and inserts custom table rows within the configured table', async () => {
    await env.deps.services.tables.create(
      { organizationId: org.organizationId, userId: org.owner.userId },
      { name: 'leads', fields: [{ name: 'email', type: 'text', required: true, comments: 'contact' }] },
    );
    const inserted = JSON.parse(
      await run({ tables_insert: { tableName: 'leads' } }, 'tables_insert', {
        rows: [{ email: 'a@x.io' }, { nope: 1 }],
      }),
    );
    expect(inserted).to.deep.include({ inserted: 1, failed: 1 });
    const rows = JSON.parse(
      await run({ tables_query: { tableName: 'leads', maxRows: 5 } }, 'tables_query', {
        filters: 'email:like:a@:and',
      }),
    );
    expect(rows.items.map((r: { email: string }) => r.email)).to.deep.equal(['a@x.io']);
  });

  it('makes HTTP requests only to allowed hosts, adding the configured headers', async () => {
    const { port } = server.address() as AddressInfo;
    const config = { http_request: { allowedHosts: ['127.0.0.1'], headers: { 'x-api-key': 'secret' } } };
    const out = JSON.parse(await run(config, 'http_request', { url: `http://127.0.0.1:${port}/ping` }));
    expect(out).to.deep.include({ status: 200, body: '{"pong":true}' });
    expect(hits).to.include('GET /ping secret');
    await run({ http_request: { allowedHosts: ['api.example.com'] } }, 'http_request', {
      url: `http://127.0.0.1:${port}/x`,
    }).then(
      () => expect.fail('a host outside the allow-list was reached'),
      (err: Error) => expect(err.message).to.contain('allowedHosts'),
    );
  });

  it('applies the registry defaults: an http_request tool configured without methods allows only GET', async () => {
    const { port } = server.address() as AddressInfo;
    const config = { http_request: { allowedHosts: ['127.0.0.1'] } };
    const url = `http://127.0.0.1:${port}/defaults`;
    const before = hits.length;
    for (const method of ['POST', 'DELETE']) {
      await run(config, 'http_request', { url, method, body: '{}' }).then(
        () => expect.fail(`${method} was sent by a tool that allows only the default GET`),
        (err: Error) => expect(err.message).to.contain(`method ${method} is not allowed`),
      );
    }
    expect(hits.slice(before)).to.deep.equal([]);
    const out = JSON.parse(await run(config, 'http_request', { url }));
    expect(out).to.deep.include({ status: 200 });
    expect(hits.slice(before)).to.deep.equal(['GET /defaults ']);
  });

  it('matches a `*.` entry to any subdomain only, and still refuses an allowed name that resolves privately', async () => {
    // Every name resolves to a private address: an allowed host gets as far as the connection and is refused
    // there; any other host is refused by the allow-list before it is even resolved.
    const resolve: Resolver = () => Promise.resolve([{ address: '10.0.0.7', family: 4 }]);
    const config = { http_request: { allowedHosts: ['exact.test', '*.example.com'] } };
    const refusal = (host: string) =>
      run(config, 'http_request', { url: `http://${host}/` }, false, resolve).then(
        () => expect.fail(`${host} was reached`),
        (err: Error) => err.message,
      );
    for (const host of ['api.example.com', 'a.b.example.com', 'exact.test']) {
      expect(await refusal(host)).to.equal(`${host} resolves to a private or reserved address`);
    }
    for (const host of [
      'example.com',
      'badexample.com',
      'example.com.evil.test',
      'notexact.test',
      'exact.testx',
    ]) {
      expect(await refusal(host)).to.equal(`host ${host} is not in this tool's allowedHosts`);
    }
  });

  it('sends the body of a POST, none with GET or DELETE, and only the methods configured', async () => {
    const { port } = server.address() as AddressInfo;
    const config = { http_request: { allowedHosts: ['127.0.0.1'], methods: ['GET', 'POST', 'DELETE'] } };
    const url = `http://127.0.0.1:${port}/items`;
    const before = bodies.length;
    for (const [method, body] of [
      ['GET', 'not for a GET'],
      ['DELETE', 'not for a DELETE'],
      ['POST', '{"name":"new"}'],
    ]) {
      const out = JSON.parse(await run(config, 'http_request', { url, method, body }));
      expect(out).to.deep.include({ status: 200, body: '{"pong":true}' });
    }
    expect(bodies.slice(before)).to.deep.equal(['GET ', 'DELETE ', 'POST {"name":"new"}']);
    await run(config, 'http_request', { url, method: 'PUT', body: '{}' }).then(
      () => expect.fail('PUT was sent by a tool that does not allow it'),
      (err: Error) =>
        expect(err.message).to.equal('method PUT is not allowed by this tool (allowed: GET, POST, DELETE)'),
    );
    expect(bodies).to.have.length(before + 3);
  });

  it('gives the model at most 20,000 characters of a response body, marked when cut', async () => {
    const { port } = server.address() as AddressInfo;
    const config = { http_request: { allowedHosts: ['127.0.0.1'] } };
    const body = async (size: number) =>
      (
        JSON.parse(await run(config, 'http_request', { url: `http://127.0.0.1:${port}/text/${size}` })) as {
          body: string;
        }
      ).body;
    const empty = JSON.parse(
      await run(config, 'http_request', { url: `http://127.0.0.1:${port}/empty` }),
    ) as Record<string, unknown>;
    expect(empty).to.deep.equal({ status: 204, contentType: null, body: '' });
    expect(await body(20_000)).to.equal('x'.repeat(20_000));
    expect(await body(20_001)).to.equal(`${'x'.repeat(20_000)}…(truncated)`);
    expect(await body(30_000)).to.equal(`${'x'.repeat(20_000)}…(truncated)`);
    // Far more than the model may see: reading stops early, and the model still gets the first 20,000.
    expect(await body(500_000)).to.equal(`${'x'.repeat(20_000)}…(truncated)`);
  });

  it('tells the current time in the configured time zone', async () => {
    const out = JSON.parse(
      await run({ current_time: { timeZone: 'Australia/Sydney' } }, 'current_time', {}),
    ) as { now: string; timeZone: string; local: string };
    expect(out.timeZone).to.equal('Australia/Sydney');
    expect(Date.parse(out.now)).to.be.a('number').and.not.NaN;
    // Day first, as in Australia, at Sydney's wall-clock time (UTC+10 or +11), not the server's.
    expect(out.local).to.equal(new Date(out.now).toLocaleString('en-AU', { timeZone: 'Australia/Sydney' }));
    expect(out.local).to.not.equal(new Date(out.now).toLocaleString('en-AU', { timeZone: 'UTC' }));
  });

  it('returns at most maxRows rows when the model asks for more or names no limit', async () => {
    await env.deps.services.tables.create(
      { organizationId: org.organizationId, userId: org.owner.userId },
      { name: 'notes', fields: [{ name: 'n', type: 'numeric', required: true, comments: 'a number' }] },
    );
    const rows = Array.from({ length: 7 }, (_, n) => ({ n }));
    expect(
      JSON.parse(await run({ tables_insert: { tableName: 'notes' } }, 'tables_insert', { rows })),
    ).to.deep.include({
      inserted: 7,
      failed: 0,
    });
    const count = async (args: object) =>
      (
        JSON.parse(await run({ tables_query: { tableName: 'notes', maxRows: 5 } }, 'tables_query', args)) as {
          items: unknown[];
        }
      ).items.length;
    expect(await count({})).to.equal(5);
    expect(await count({ limit: 50 })).to.equal(5);
    expect(await count({ limit: 3 })).to.equal(3);
    // Rows that are not a list insert nothing and report no failure.
    expect(
      JSON.parse(
        await run({ tables_insert: { tableName: 'notes' } }, 'tables_insert', { rows: 'seven rows' }),
      ),
    ).to.deep.include({ inserted: 0, failed: 0 });
  });

  it('refuses private and loopback addresses unless the deployment allows them', async () => {
    const { port } = server.address() as AddressInfo;
    await run(
      { http_request: { allowedHosts: ['127.0.0.1'] } },
      'http_request',
      { url: `http://127.0.0.1:${port}/` },
      false,
    ).then(
      () => expect.fail('loopback was reached'),
      (err: Error) => expect(err.message).to.contain('private'),
    );
    for (const url of [
      'http://10.1.2.3/',
      'http://169.254.169.254/latest',
      'http://[::1]/',
      'http://192.168.0.1/',
      'file:///etc/passwd',
    ]) {
      await assertPublicUrl(url, false).then(
        () => expect.fail(`${url} was allowed`),
        (err: Error) => expect(err).to.be.instanceOf(BlockedAddressError),
      );
    }
    expect((await assertPublicUrl('http://93.184.216.34/', false)).hostname).to.equal('93.184.216.34');
  });

  it('refuses a tool that is not attached, and arguments that are not JSON', async () => {
    await run({}, 'current_time', {}).then(
      () => expect.fail('ran an unattached tool'),
      (err: Error) => expect(err.message).to.contain('not attached'),
    );
    await env.deps.repos.tenant(org.organizationId).toolAttachments.create('agt_t', 'current_time', {});
    const activities = activitiesFor(true);
    const call = { id: 'c1', name: 'current_time', arguments: '{oops' };
    const runTool = (input: RunToolInput) => activities.runTool(input);
    await new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') })
      .run(runTool, { organizationId: org.organizationId, agentId: 'agt_t', requestId: 'r', call })
      .then(
        () => expect.fail('accepted malformed arguments'),
        (err: Error) => expect(err.message).to.contain('JSON'),
      );
  });
});
