import type { ErrorRequestHandler } from 'express';
import { AppError, asServiceUnavailable, ServiceUnavailableError, TooManyRequestsError } from '@lib/errors';
import type { Logger } from '@lib/logger';

const CODES: Record<number, string> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

// openapi.yaml's "not blank" pattern, as the validator quotes it: a lookahead no reader should have to decode.
const NOT_BLANK = `must match pattern "${String.raw`(?=[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff])`}"`;
const plainly = (message: string | undefined) => message?.replaceAll(NOT_BLANK, 'must not be blank');

interface ValidatorError {
  status?: number;
  message?: string;
  errors?: Array<{ path?: string; message?: string }>;
  type?: string;
  headers?: { Allow?: string };
}

/** The one error middleware: typed errors become 4xx `{ error: { code, message, details? } }`; an unreachable
 * database or Temporal a 503 `service_unavailable` with `Retry-After`; anything else a generic 500 whose cause
 * is logged, never sent. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    // Auth errors are re-wrapped by the validator (as a 401); answer with the original typed error, and a
    // database that could not be asked who the caller is is an outage, not bad credentials.
    const cause = asServiceUnavailable(req.authError) ? req.authError : err;
    const unavailable = asServiceUnavailable(cause);
    const source = unavailable ?? (req.authError instanceof AppError ? req.authError : err);
    if (unavailable) (req.log ?? logger).warn({ err: cause }, 'a backing service is unavailable');
    if (source instanceof AppError) {
      if (source instanceof TooManyRequestsError || source instanceof ServiceUnavailableError)
        res.set('Retry-After', String(source.retryAfterSeconds));
      res
        .status(source.status)
        .json({ error: { code: source.code, message: source.message, details: source.details } });
      return;
    }
    const e = source as ValidatorError;
    if (e?.type === 'entity.parse.failed') {
      res.status(400).json({ error: { code: 'invalid_json', message: 'request body is not valid JSON' } });
      return;
    }
    if (e?.type === 'entity.too.large') {
      res.status(413).json({ error: { code: 'payload_too_large', message: 'request body is too large' } });
      return;
    }
    const status = typeof e?.status === 'number' ? e.status : 500;
    if (status >= 400 && status < 500 && CODES[status]) {
      const details = e.errors?.map((x) => ({ path: x.path, message: plainly(x.message) }));
      const message = status === 404 ? 'no such route' : (plainly(e.message) ?? 'bad request');
      // RFC 9110: a 405 names the methods the path has (the validator lists those openapi.yaml declares).
      if (status === 405 && e.headers?.Allow) res.set('Allow', e.headers.Allow.toUpperCase());
      res
        .status(status)
        .json({ error: { code: CODES[status], message, ...(details?.length ? { details } : {}) } });
      return;
    }
    (req.log ?? logger).error({ err: source }, 'unhandled error');
    if (!res.headersSent) {
      res.status(500).json({ error: { code: 'internal_error', message: 'internal server error' } });
    }
  };
}
