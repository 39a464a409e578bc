import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '@api/app';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { testEnv } from '@test/helpers/env';

describe('GET /healthz', () => {
  it('is 200 with every check ok when the whole stack is reachable, without auth', async () => {
    const env = await testEnv();
    const res = await request(env.app).get('/healthz').expect(200);
    expect(res.body).to.deep.equal({
      status: 'ok',
      checks: {
        mongo: { status: 'ok' },
        temporal: { status: 'ok' },
        s3: { status: 'ok' },
        redis: { status: 'ok' },
      },
    });
  });

  it('is 503 and names the failing check when a part is unreachable', async () => {
    const env = await testEnv();
    // Nothing listens on port 1: Redis is down for this app instance only.
    const config = {
      ...env.config,
      redisUrl: 'redis://127.0.0.1:1',
      s3: { ...env.config.s3, bucket: 'no-such-bucket' },
    };
    const deps = await createDeps(config, { logger: createLogger('silent') });
    try {
      deps.redis.options.retryStrategy = () => null;
      const res = await request(createApp(deps)).get('/healthz').expect(503);
      expect(res.body.status).to.equal('error');
      expect(res.body.failing).to.have.members(['redis', 's3']);
      expect(res.body.checks.mongo.status).to.equal('ok');
      expect(res.body.checks.temporal.status).to.equal('ok');
      expect(res.body.checks.redis.status).to.equal('error');
    } finally {
      await closeDeps(deps);
    }
  });
});

describe('API docs', () => {
  it('serves the contract and a docs page that loads Redoc locally', async () => {
    const env = await testEnv();
    const yaml = await request(env.app).get('/openapi.yaml').expect(200);
    expect(yaml.text).to.contain('openapi: 3.0.3');
    const json = await request(env.app).get('/openapi.json').expect(200);
    expect(json.body.paths).to.have.property('/orgs/{organizationId}/users');
    const page = await request(env.app).get('/docs').expect(200);
    expect(page.text).to.contain('/docs/redoc.standalone.js');
    const script = await request(env.app).get('/docs/redoc.standalone.js').expect(200);
    expect(script.text.length).to.be.greaterThan(100_000);
  });

  it('answers an unknown route with a 404 error body', async () => {
    const env = await testEnv();
    const res = await request(env.app).get('/nope').expect(404);
    expect(res.body.error.code).to.equal('not_found');
  });
});
