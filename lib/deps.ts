import type { S3Client } from '@aws-sdk/client-s3';
import type { Redis } from 'ioredis';
import type OpenAI from 'openai';
import { Authenticator } from './auth/authenticator';
import { SharedCredentialCache } from './auth/credential-cache';
import { TokenService } from './auth/tokens';
import type { Config } from './config';
import { Database } from './db/connection';
import { createOutboundClient, type OutboundClient } from './http/outbound';
import { closeLlmClient, createLlmClient } from './llm';
import { createLogger, type Logger } from './logger';
import { createMailer, type Mailer } from './mail';
import { createMetrics, type Metrics } from './observability/metrics';
import type { Tracing } from './observability/tracing';
import { createRealtimeEmitter, type RealtimeEmitter } from './realtime/emitter';
import { MODELS, Repositories } from './repositories';
import { createRedis } from './redis';
import { createS3Client } from './s3';
import { createEmbedder } from './embeddings/create-embedder';
import { Embedders } from './embeddings/embedders';
import { ObjectStore } from './knowledge-bases/object-store';
import { createVectorStore } from './vectors/create-vector-store';
import type { VectorStore } from './vectors/vector-store';
import { createServices, type Services } from './services';
import { registerAdmissionGauges } from './admission/gauges';
import { setExpressionLimits } from './expressions/limits';
import { createTemporalClient, type TemporalDeps } from './temporal/client';
import type { WorkflowCatalog } from './artifacts/workflow-catalog';

/**
 * Everything a process needs, created once and passed down explicitly. The one composition root: the API, the
 * worker, the CLI, tests and benches all build themselves from createDeps. Network clients connect lazily, so a
 * process pays only for what it uses.
 */
export interface Deps {
  config: Config;
  logger: Logger;
  db: Database;
  repos: Repositories;
  services: Services;
  temporal: TemporalDeps;
  tokens: TokenService;
  authenticator: Authenticator;
  /** API keys and memberships authentication read, shared with other replicas' invalidations through Redis. */
  credentials: SharedCredentialCache;
  s3: S3Client;
  redis: Redis;
  realtime: RealtimeEmitter;
  llm: OpenAI;
  mailer: Mailer;
  outbound: OutboundClient;
  /** knowledge-base file bytes */
  objects: ObjectStore;
  embedders: Embedders;
  vectors: VectorStore;
  /**
   * The organization's workflows (action chains, by actionChainId) as app manifests declare and apps run them.
   * Its action chains (lib/chains/workflow-catalog.ts) unless a test gives a stand-in.
   */
  workflows: WorkflowCatalog;
  /** This process's Prometheus metrics (GET /metrics on the API, WORKER_METRICS_PORT on the worker). */
  metrics: Metrics;
  /** OpenTelemetry tracing; undefined (off, no cost) unless OTEL_EXPORTER_OTLP_ENDPOINT is set or a test gives one. */
  tracing?: Tracing;
}

export async function createDeps(
  config: Config,
  opts: { logger?: Logger; workflows?: WorkflowCatalog; tracing?: Tracing; process?: 'api' | 'worker' } = {},
): Promise<Deps> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const processName = opts.process ?? 'api';
  const metrics = createMetrics({ process: processName });
  const { otlpEndpoint, serviceName } = config.observability;
  // Loaded only when tracing is on (see lib/observability/tracing.ts).
  const tracing =
    opts.tracing ??
    (otlpEndpoint
      ? (await import('./observability/tracing')).tracingFromConfig({
          otlpEndpoint,
          serviceName: serviceName ?? `agent-workspace-${processName}`,
        })
      : undefined);
  const db = await Database.connect(config.mongodbUri, MODELS, config.dbSocketTimeoutMs);
  const tokens = new TokenService(config.auth.jwtSecret, config.auth.issuer, config.auth.sessionTtlSeconds);
  const temporal = createTemporalClient(config.temporal, { metrics, tracing });
  const outbound = createOutboundClient({ allowPrivate: config.allowPrivateOutbound });
  const redis = createRedis(config.redisUrl, config.redisCommandTimeoutMs);
  redis.on('error', (err: Error) => logger.warn({ err }, 'redis error'));
  const credentials = new SharedCredentialCache(redis, config.auth.credentialCacheTtlMs, logger);
  const repos = new Repositories(db, (organizationId) => credentials.changed(organizationId));
  const realtime = createRealtimeEmitter(redis);
  const s3 = createS3Client(config.s3);
  const signer = config.s3.publicEndpoint
    ? createS3Client({ ...config.s3, endpoint: config.s3.publicEndpoint })
    : s3;
  const objects = new ObjectStore(s3, signer, config.s3.bucket);
  const llm = createLlmClient(config.llm, logger);
  const embedders = new Embedders(createEmbedder(config.embeddings, llm));
  const vectors = createVectorStore(config.vectors);
  // Templates, guards, paths and patterns are checked and evaluated by plain functions: their budgets are set
  // once per process (the last createDeps wins; every process builds one).
  setExpressionLimits(config.expressions);
  const services = createServices({
    repos,
    temporal,
    tokens,
    outbound,
    realtime,
    config,
    objects,
    embedders,
    vectors,
    llm,
    logger,
    redis,
    metrics,
    credentials,
    workflows: opts.workflows,
  });
  // The backlog is the same from every process: the API's /metrics shows it.
  if (processName === 'api') registerAdmissionGauges(metrics.registry, redis);
  return {
    config,
    logger,
    db,
    repos,
    services,
    temporal,
    tokens,
    authenticator: new Authenticator(
      { apiKeyRecords: repos.apiKeyRecords, users: services.users, apiKeys: services.apiKeys },
      tokens,
      config.auth.oidc,
      credentials,
    ),
    credentials,
    s3,
    redis,
    realtime,
    llm,
    mailer: createMailer(config.mail.smtpUrl, config.mail.from, config.mail.timeoutMs),
    outbound,
    objects,
    embedders,
    vectors,
    workflows: services.workflows,
    metrics,
    tracing,
  };
}

const closing = new WeakMap<Deps, Promise<void>>();

/**
 * Closes every client, once: a second call waits for the first (a process told to stop twice, say SIGINT to its
 * group and then SIGTERM from its supervisor, must not close a client already closed and crash on its error).
 */
export function closeDeps(deps: Deps): Promise<void> {
  let closed = closing.get(deps);
  if (!closed) {
    closed = closeAll(deps);
    closing.set(deps, closed);
  }
  return closed;
}

async function closeAll(deps: Deps): Promise<void> {
  // Usage records a chain step did not wait for are written before the database closes.
  await deps.services.credits.settled();
  deps.mailer.close();
  await deps.outbound.close();
  await Promise.allSettled([
    deps.credentials.close(),
    deps.db.close(),
    deps.temporal.connection.close(),
    deps.redis.quit(),
    deps.vectors.close(),
    closeLlmClient(deps.llm),
    deps.tracing?.shutdown(),
  ]);
  deps.s3.destroy();
}
