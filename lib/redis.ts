import { Redis } from 'ioredis';

/**
 * The process's Redis client. Commands wait for a connection while it reconnects (the offline queue), are tried
 * twice, and fail after `commandTimeoutMs` when Redis does not answer (REDIS_COMMAND_TIMEOUT_MS): every caller
 * then goes on without it, as when it is down (docs/operations.md "When a dependency is down").
 */
export function createRedis(url: string, commandTimeoutMs: number): Redis {
  return new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    commandTimeout: commandTimeoutMs,
  });
}
