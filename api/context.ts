import type { Request } from 'express';
import type { RequestContext } from '@lib/auth/context';
import { unauthorized } from '@lib/errors';

declare module 'express-serve-static-core' {
  interface Request {
    ctx?: RequestContext;
    /** The typed error auth raised; express-openapi-validator re-wraps it, the error middleware restores it. */
    authError?: unknown;
  }
}

export function ctxOf(req: Request): RequestContext {
  if (!req.ctx) throw unauthorized();
  return req.ctx;
}

/** Path parameters are validated by the OpenAPI middleware before handlers run. */
export function param(req: Request, name: string): string {
  return String(req.params[name]);
}

/** The JSON body, already validated against the operation's schema in openapi.yaml. */
export function body<T>(req: Request): T {
  return req.body as T;
}
