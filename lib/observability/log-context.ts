import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What every log line written while serving one request, or running one activity, carries: the shared logger
 * (lib/logger.ts) mixes the current store into each line, so library code logging through it needs no child
 * logger handed down.
 */
export interface LogContext {
  requestId?: string;
  organizationId?: string;
  traceId?: string;
  workflowId?: string;
  runId?: string;
  activityType?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `context` on every log line written inside it (and in everything it starts). */
export function withLogContext<T>(context: LogContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...context }, fn);
}

/** Adds fields to the current context (e.g. the organization once the request is authenticated). */
export function annotateLogContext(fields: LogContext): void {
  const store = storage.getStore();
  if (store) Object.assign(store, fields);
}

export function currentLogContext(): LogContext {
  return storage.getStore() ?? {};
}
