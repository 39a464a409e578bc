import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { AppError, forbidden, notFound, unauthorized } from '@lib/errors';
import type { Logger } from '@lib/logger';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The operator guard of `/metrics` (API and worker alike): `Authorization: Bearer <METRICS_TOKEN>`. Without a
 * configured token the endpoint does not exist (404); no bearer token is 401; any other token — an
 * organization's API key included — is 403. Compared in constant time.
 */
export function requireMetricsToken(authorization: string | undefined, token: string | undefined): void {
  if (!token) throw notFound('metrics (set METRICS_TOKEN to enable them)');
  const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!given) throw unauthorized('the metrics token is required (Authorization: Bearer <METRICS_TOKEN>)');
  if (!timingSafeEqual(digest(given), digest(token))) throw forbidden('not the metrics token');
}

/**
 * The worker's metrics listener (WORKER_METRICS_PORT): `GET /metrics` behind the same guard as the API's,
 * anything else 404, errors with the API's error body.
 */
export function startMetricsServer(opts: {
  port: number;
  host?: string;
  token: string | undefined;
  registry: Registry;
  logger: Logger;
}): Promise<Server> {
  const server = createServer((req, res) => {
    const fail = (err: AppError) =>
      res
        .writeHead(err.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: err.code, message: err.message } }));
    try {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics') throw notFound('route');
      if (req.method !== 'GET') throw new AppError(405, 'method_not_allowed', 'only GET /metrics');
      requireMetricsToken(req.headers.authorization, opts.token);
    } catch (err) {
      fail(err as AppError);
      return;
    }
    opts.registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(body),
      (err: unknown) => {
        opts.logger.error({ err }, 'metrics collection failed');
        fail(new AppError(500, 'internal_error', 'internal server error'));
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve(server));
  });
}
