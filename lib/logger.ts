import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { service: 'agent-workspace', ...bindings } });
}
