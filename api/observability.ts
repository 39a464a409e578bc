import { randomUUID } from 'node:crypto';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Request, RequestHandler } from 'express';
import type { Metrics } from '@lib/observability/metrics';
import { annotateLogContext, withLogContext } from '@lib/observability/log-context';
import type { Tracing } from '@lib/observability/tracing';

/** A caller's request id is kept when it is 1–128 characters of this set; anything else gets a fresh one. */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The request's id: the caller's valid `X-Request-Id`, or a new UUID. */
export function requestIdOf(req: Request): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * First middleware: gives the request its id (echoed in `X-Request-Id`) and runs the rest of its handling in a log
 * context, so every line logged while serving it — by handlers, services or lib code — carries `requestId`.
 */
export function requestContext(): RequestHandler {
  return (req, res, next) => {
    const requestId = requestIdOf(req);
    req.id = requestId;
    res.setHeader('X-Request-Id', requestId);
    withLogContext({ requestId }, () => next());
  };
}

/**
 * The route label: the openapi path template the validator matched (`/orgs/{organizationId}`), never the raw
 * path, so an id in a URL never becomes a label value; a route of the docs router by its own path; else
 * `unmatched`.
 */
export function routeOf(req: Request): string {
  const openapi = (req as { openapi?: { openApiRoute?: string } }).openapi;
  if (openapi?.openApiRoute) return openapi.openApiRoute;
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : 'unmatched';
}

/** Counts and times every request by method, route template and status, once its response is written. */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const end = metrics.httpDuration.startTimer();
    res.once('finish', () => {
      const labels = { method: req.method, route: routeOf(req), status_code: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      end(labels);
    });
    next();
  };
}

/**
 * A server span per request (continuing a caller's W3C `traceparent`), active while the request is handled, so
 * a workflow it starts — and that workflow's activities — join the same trace. Named by route template.
 */
export function httpTracing(tracing: Tracing): RequestHandler {
  return (req, res, next) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracing.tracer.startSpan(
      `${req.method}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
      parent,
    );
    annotateLogContext({ traceId: span.spanContext().traceId });
    res.once('finish', () => {
      const route = routeOf(req);
      span.updateName(`${req.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), () => next());
  };
}
