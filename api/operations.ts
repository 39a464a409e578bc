import { readFileSync } from 'node:fs';
import type { Express, RequestHandler } from 'express';
import { parse } from 'yaml';
import { openApiSpecPath } from '@lib/spec';

/** Route handlers by the operationId they implement: search a handler by its operationId in openapi.yaml. */
export type OperationHandlers = Record<string, RequestHandler>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface SpecOperation {
  method: (typeof METHODS)[number];
  path: string;
  operationId: string;
}

/** Every operation of openapi.yaml with its Express path (`{name}` → `:name`), in spec order. */
export function specOperations(): SpecOperation[] {
  const spec = parse(readFileSync(openApiSpecPath(), 'utf8')) as {
    paths: Record<string, Partial<Record<string, { operationId?: string }>>>;
  };
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operationId = item[method]?.operationId;
      if (!operationId) return [];
      return [{ method, path: path.replace(/\{([^}]+)\}/g, ':$1'), operationId }];
    }),
  );
}

/**
 * Mounts one handler per operation of openapi.yaml, at the operation's path and method. Start-up fails when an
 * operation has no handler or a handler names no operation, so the routes and the contract cannot drift apart.
 */
export function mountOperations(app: Express, handlers: OperationHandlers): void {
  const operations = specOperations();
  const missing = operations.filter((op) => !handlers[op.operationId]).map((op) => op.operationId);
  const known = new Set(operations.map((op) => op.operationId));
  const unknown = Object.keys(handlers).filter((id) => !known.has(id));
  if (missing.length || unknown.length) {
    throw new Error(
      `openapi.yaml and the route handlers disagree: no handler for [${missing.join(', ')}]; ` +
        `no operation for [${unknown.join(', ')}]`,
    );
  }
  // The validator has already matched the request to its operation (req.openapi): dispatch on its operationId
  // instead of registering a route per operation, which made Express try up to 146 route patterns per request.
  app.use((req, res, next) => {
    const matched = (req as OpenApiRequest).openapi;
    const handler = matched?.schema.operationId ? handlers[matched.schema.operationId] : undefined;
    if (!handler) return next();
    req.params = matched!.pathParams;
    return handler(req, res, next);
  });
}

/** What express-openapi-validator's metadata middleware leaves on a request it matched to an operation. */
interface OpenApiRequest {
  openapi?: { schema: { operationId?: string }; pathParams: Record<string, string> };
}
