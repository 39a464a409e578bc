import pino from 'pino';

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
  };
  return destination ? pino(options, destination) : pino(options);
}
