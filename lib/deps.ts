import type { S3Client } from '@aws-sdk/client-s3';
import { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { Authenticator } from './auth/authenticator';
import { TokenService } from './auth/tokens';
import type { Config } from './config';
import { connectDatabase, type Models } from './db/models';
import type { Logger } from './logger';
import { createS3Client } from './s3';
import { createTemporalClient, type TemporalDeps } from './temporal/client';

/** Everything the API needs, created once per process and passed down explicitly. */
export interface Deps {
  config: Config;
  logger: Logger;
  conn: Connection;
  models: Models;
  temporal: TemporalDeps;
  tokens: TokenService;
  authenticator: Authenticator;
  s3: S3Client;
  redis: Redis;
}

export async function createDeps(config: Config, logger: Logger): Promise<Deps> {
  const { conn, models } = await connectDatabase(config.mongodbUri);
  const tokens = new TokenService(config.auth.jwtSecret, config.auth.issuer, config.auth.sessionTtlSeconds);
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
  });
  redis.on('error', (err: Error) => logger.warn({ err }, 'redis error'));
  return {
    config,
    logger,
    conn,
    models,
    temporal: createTemporalClient(config.temporal),
    tokens,
    authenticator: new Authenticator(models, tokens, config.auth.oidc),
    s3: createS3Client(config.s3),
    redis,
  };
}

export async function closeDeps(deps: Deps): Promise<void> {
  await Promise.allSettled([deps.conn.close(), deps.temporal.connection.close(), deps.redis.quit()]);
  deps.s3.destroy();
}
