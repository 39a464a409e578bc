import pino from 'pino';
import { currentLogContext } from './observability/log-context';

export type Logger = pino.Logger;

/** Credentials never reach the logs: bearer tokens and API keys, cookies, and their equivalents on sockets. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'token',
  'apiKey',
  'metricsToken',
];

export function createLogger(
  level: string,
  bindings: Record<string, unknown> = {},
  destination?: pino.DestinationStream,
): Logger {
  const options = {
    level,
    base: { service: 'agent-workspace', ...bindings },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // The request id (API) or workflow and run ids (activities) of whatever the line was written during.
    // A copy: pino merges the line's own fields into what the mixin returns.
    mixin: () => ({ ...currentLogContext() }),
  };
  return destination ? pino(options, destination) : pino(options);
}
