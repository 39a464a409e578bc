import { expect } from 'chai';
import express, { type RequestHandler } from 'express';
import { createServer } from 'node:net';
import { MongoClient } from 'mongodb';
import request from 'supertest';
import { errorHandler } from '@api/error-handler';
import { notFound, unauthorized } from '@lib/errors';
import { createLogger } from '@lib/logger';
import { createTemporalClient } from '@lib/temporal/client';

// The one place that turns "the database / Temporal is not there" into 503 service_unavailable: fed the real
// errors the MongoDB driver and Temporal's client raise when nothing listens on their port.

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function appThrowing(err: unknown, authError?: unknown) {
  const app = express();
  const fail: RequestHandler = (req, _res, next) => {
    if (authError !== undefined) req.authError = authError;
    next(err);
  };
  app.get('/x', fail);
  app.use(errorHandler(createLogger('silent')));
  return app;
}

describe('errors of an unreachable database or Temporal', () => {
  let mongoError: unknown;
  let temporalError: unknown;
  before(async function () {
    this.timeout(60_000);
    const port = await closedPort();
    const client = new MongoClient(`mongodb://127.0.0.1:${port}/x`, {
      serverSelectionTimeoutMS: 300,
    });
    mongoError = await client
      .db()
      .command({ ping: 1 })
      .catch((e: unknown) => e);
    await client.close();
    const temporal = createTemporalClient({
      address: `127.0.0.1:${port}`,
      namespace: 'default',
      taskQueue: 'q',
      rpcTimeoutMs: 10_000,
    });
    temporalError = await temporal.client.workflow
      .start('nothing', { workflowId: 'w', taskQueue: 'q', args: [] })
      .catch((e: unknown) => e);
    await temporal.connection.close();
  });

  const expectUnavailable = (res: request.Response) => {
    expect(res.status).to.equal(503);
    expect(res.body.error.code).to.equal('service_unavailable');
    expect(res.body.error.message).to.be.a('string').and.not.equal('');
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
  };

  it('a database the driver cannot reach is a 503 with Retry-After', async () => {
    expect(mongoError).to.be.instanceOf(Error);
    expectUnavailable(await request(appThrowing(mongoError)).get('/x'));
  });

  it('a Temporal the client cannot reach is a 503 with Retry-After', async () => {
    expect(temporalError).to.be.instanceOf(Error);
    expectUnavailable(await request(appThrowing(temporalError)).get('/x'));
  });

  it('a caller who could not be authenticated because the database is down gets 503, not 401', async () => {
    expectUnavailable(await request(appThrowing(unauthorized(), mongoError)).get('/x'));
  });

  it('typed errors keep their status and an unknown error stays a generic 500', async () => {
    const missing = await request(appThrowing(notFound('thing'))).get('/x');
    expect(missing.status).to.equal(404);
    expect(missing.headers['retry-after']).to.equal(undefined);
    const bug = await request(appThrowing(new Error('boom'))).get('/x');
    expect(bug.status).to.equal(500);
    expect(bug.body).to.deep.equal({ error: { code: 'internal_error', message: 'internal server error' } });
    const badCredentials = await request(appThrowing(unauthorized(), unauthorized('invalid API key'))).get(
      '/x',
    );
    expect(badCredentials.status).to.equal(401);
  });
});
