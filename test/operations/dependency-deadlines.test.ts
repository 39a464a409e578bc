import { expect } from 'chai';
import express from 'express';
import { createServer, type Server, type Socket } from 'node:net';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import request from 'supertest';
import { errorHandler } from '@api/error-handler';
import { loadConfig } from '@lib/config';
import { createLogger } from '@lib/logger';
import { createMailer } from '@lib/mail';
import { createRedis } from '@lib/redis';
import { createS3Client } from '@lib/s3';
import { createTemporalClient } from '@lib/temporal/client';

// docs/operations.md "When a dependency is down": a server that takes the connection and then never answers (a frozen
// process, a partition) fails each client's call after its deadline, with the production defaults, instead of
// holding it. The API answers what it cannot do without Temporal or the object store with a 503.

/**
 * Accepts connections and, after `greeting` if any, never writes a byte: what a server frozen (SIGSTOP) with its
 * listening socket open, or after it greeted, looks like from the client.
 */
async function silentServer(greeting?: string): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (greeting) socket.write(greeting);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What the API answers when a request failed with `err`. */
function answerTo(err: unknown) {
  const app = express();
  app.get('/x', (_req, _res, next) => next(err));
  app.use(errorHandler(createLogger('silent')));
  return request(app).get('/x');
}

const failure = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('deadlines on every dependency (a server that stops answering)', () => {
  // The defaults: only the one setting without a default is given.
  const config = loadConfig({ JWT_SECRET: 'a-secret-long-enough-for-any-rule-0123456789abcdef' });
  let silent: Awaited<ReturnType<typeof silentServer>>;
  /** A mail relay that greets, then freezes (nodemailer's own greeting deadline is never reached). */
  let relay: Awaited<ReturnType<typeof silentServer>>;
  /** What each client's call ended with, all four calls made at once against the silent server. */
  let ended: { temporal: unknown; s3: unknown; redis: unknown; mail: unknown };

  before(async function () {
    // The longest default deadline (SMTP_TIMEOUT_MS; S3's three attempts of S3_REQUEST_TIMEOUT_MS), with room;
    // without a deadline a call never ends and this hook fails.
    this.timeout(120_000);
    silent = await silentServer();
    relay = await silentServer('220 relay.test ESMTP\r\n');
    const at = `127.0.0.1:${silent.port}`;
    const temporal = createTemporalClient({ ...config.temporal, address: at });
    const s3 = createS3Client({
      ...config.s3,
      endpoint: `http://${at}`,
      forcePathStyle: true,
      accessKeyId: 'key',
      secretAccessKey: 'secret',
    });
    const redis = createRedis(`redis://${at}`, config.redisCommandTimeoutMs);
    redis.on('error', () => undefined);
    const mailer = createMailer(`smtp://127.0.0.1:${relay.port}`, 'a@b.test', config.mail.timeoutMs);
    try {
      const [t, o, r, m] = await Promise.all([
        failure(temporal.client.workflow.start('nothing', { workflowId: 'w', taskQueue: 'q', args: [] })),
        failure(s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }))),
        failure(redis.get('k')),
        failure(mailer.sendMail({ to: 'c@d.test', subject: 's', text: 't' })),
      ]);
      ended = { temporal: t, s3: o, redis: r, mail: m };
    } finally {
      await temporal.connection.close();
      s3.destroy();
      redis.disconnect();
      mailer.close();
    }
  });
  after(() => Promise.all([silent?.close(), relay?.close()]));

  it('a Temporal call fails with DEADLINE_EXCEEDED (TEMPORAL_RPC_TIMEOUT_MS), answered 503', async () => {
    expect((ended.temporal as { cause?: { code?: number } }).cause?.code).to.equal(4); // DEADLINE_EXCEEDED
    const res = await answerTo(ended.temporal);
    expect(res.status).to.equal(503);
    expect(res.body.error.message).to.include('Temporal');
  });

  it('an object-store request fails with a timeout (S3_REQUEST_TIMEOUT_MS), answered 503', async () => {
    expect((ended.s3 as Error).name).to.equal('TimeoutError');
    const res = await answerTo(ended.s3);
    expect(res.status).to.equal(503);
    expect(res.body.error.message).to.include('object store');
  });

  it('a Redis command fails (REDIS_COMMAND_TIMEOUT_MS), so its callers go on without it', () => {
    expect((ended.redis as Error).message).to.match(/timed out/i);
  });

  it('sending mail fails with a timeout (SMTP_TIMEOUT_MS), so the reply activity is retried', () => {
    expect((ended.mail as { code?: string }).code).to.equal('ETIMEDOUT');
  });
});
