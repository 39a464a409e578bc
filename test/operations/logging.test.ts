import { expect } from 'chai';
import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { createApp } from '@api/app';
import { requestContext } from '@api/observability';
import { createLogger } from '@lib/logger';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';

/** The app with production logging (level info) into memory. */
function loggedApp(env: TestEnv) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger('info', {}, sink);
  const app = createApp({ ...env.deps, logger });
  const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { app, logger, text: () => lines.join('\n'), lines, parsed };
}

describe('request logging', () => {
  let env: TestEnv;
  let org: TestOrg;
  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Logging Org');
  });

  it('logs every request with its organization, and never a credential or cookie', async () => {
    const { app, text, lines } = loggedApp(env);
    await request(app).get(org.path()).set('Authorization', `Bearer ${org.apiKey}`).expect(200);
    await request(app)
      .get(org.path('/users'))
      .set('Authorization', `Bearer ${org.owner.token}`)
      .set('Cookie', 'session=cookie-secret-value')
      .expect(200);
    // A refused credential is logged too, and redacted as well.
    await request(app).get(org.path()).set('Authorization', 'Bearer awk_not-a-real-key-value').expect(401);
    expect(lines.length).to.be.at.least(3);
    const logged = text();
    expect(logged).to.contain(org.organizationId);
    // No headers at all: the credentials are not even there to redact.
    expect(logged).to.not.match(/authorization|cookie/i);
    for (const secret of [org.apiKey, org.owner.token, 'cookie-secret-value', 'awk_not-a-real-key-value']) {
      expect(logged).to.not.contain(secret);
    }
  });

  it('gives every request an id: a valid X-Request-Id is kept and echoed, anything else replaced', async () => {
    const { app, parsed } = loggedApp(env);
    const given = 'req-0f7c:edge/42';
    const kept = await request(app)
      .get(org.path())
      .set('Authorization', `Bearer ${org.apiKey}`)
      .set('X-Request-Id', given)
      .expect(200);
    expect(kept.headers['x-request-id']).to.equal(given);
    const lines = parsed().filter((l) => l.requestId === given);
    expect(lines).to.not.be.empty;
    // The request's own line carries the organization it was authenticated for.
    expect(lines.some((l) => l.organizationId === org.organizationId)).to.equal(true);

    for (const bad of ['x'.repeat(129), 'has space', 'quote"d', '']) {
      const res = await request(app)
        .get(org.path())
        .set('Authorization', `Bearer ${org.apiKey}`)
        .set('X-Request-Id', bad)
        .expect(200);
      expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    }
    // No header at all: a new id, and the request's lines carry it.
    const fresh = await request(app).get(org.path('/agents')).set('Authorization', `Bearer ${org.apiKey}`);
    const id = fresh.headers['x-request-id'] as string;
    expect(id).to.match(/^[0-9a-f-]{36}$/);
    expect(parsed().some((l) => l.requestId === id)).to.equal(true);
    // The error body keeps its shape and the id is echoed on errors too.
    const refused = await request(app).get(org.path()).set('X-Request-Id', 'req-refused').expect(401);
    expect(refused.headers['x-request-id']).to.equal('req-refused');
    expect(refused.body.error.code).to.equal('unauthorized');
  });

  it('writes one short line per request: method, route template, status and time; none for health probes', async () => {
    const { app, parsed } = loggedApp(env);
    await request(app)
      .get(org.path('/agents?limit=5'))
      .set('Authorization', `Bearer ${org.apiKey}`)
      .set('X-Request-Id', 'req-short-line')
      .expect(200);
    const [line, ...more] = parsed().filter((l) => l.requestId === 'req-short-line');
    expect(more).to.deep.equal([]);
    expect(line!.msg).to.match(/^GET \/orgs\/\{organizationId\}\/agents 200 \d+ ms$/);
    expect(line!.req).to.deep.equal({ method: 'GET' });
    expect(line!.route).to.equal('/orgs/{organizationId}/agents');
    expect(line!.res).to.deep.equal({ statusCode: 200 });
    expect(line!.organizationId).to.equal(org.organizationId);

    const probe = await request(app).get('/healthz').set('X-Request-Id', 'req-probe');
    expect(probe.headers['x-request-id']).to.equal('req-probe');
    expect(parsed().filter((l) => l.requestId === 'req-probe')).to.deep.equal([]);
  });

  it('puts the request id on lines that code called during the request logs through the shared logger', async () => {
    const { logger, parsed } = loggedApp(env);
    // Library code logs through the process logger it was built with, not a per-request child.
    const app = express();
    app.use(requestContext());
    app.get('/work', async (_req, res) => {
      logger.info('before awaiting');
      await new Promise((resolve) => setImmediate(resolve));
      logger.child({ feature: 'lib' }).warn('after awaiting, from a child logger');
      res.json({ ok: true });
    });
    await Promise.all(
      ['req-a', 'req-b'].map((id) => request(app).get('/work').set('X-Request-Id', id).expect(200)),
    );
    for (const id of ['req-a', 'req-b']) {
      const mine = parsed().filter((l) => l.requestId === id);
      expect(mine.map((l) => l.msg)).to.deep.equal([
        'before awaiting',
        'after awaiting, from a child logger',
      ]);
    }
    logger.info('outside any request');
    expect(parsed().find((l) => l.msg === 'outside any request')).to.not.have.property('requestId');
  });
});
