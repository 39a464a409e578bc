/** Errors that map to a 4xx response (or a 502 for a failed model server). Anything else becomes a generic 500. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string, details?: unknown) =>
  new AppError(400, 'validation_failed', message, details);
export const unauthorized = (message = 'missing or invalid credentials') =>
  new AppError(401, 'unauthorized', message);
export const forbidden = (message = 'not allowed') => new AppError(403, 'forbidden', message);
export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);

/**
 * 400: a resource named in the request's body or query does not exist or the caller cannot see it (one named
 * in the URL path is a 404). Missing and invisible get the same answer, so it reveals no more than a 404 would.
 */
export const invalidReference = (field: string, id: string, hint = '') =>
  new AppError(400, 'invalid_reference', `${field}: ${id} does not exist or is not visible to you${hint}`);

/**
 * The resource a body or query field names, as `lookup` finds it; nothing found (null, or the lookup's own
 * 404) is `invalidReference(field, id)`.
 */
export async function referenced<T>(
  field: string,
  id: string,
  lookup: Promise<T | null | undefined>,
): Promise<T> {
  let found: T | null | undefined;
  try {
    found = await lookup;
  } catch (err) {
    if (!(err instanceof AppError && err.status === 404)) throw err;
  }
  if (!found) throw invalidReference(field, id);
  return found;
}
/** A write collided with an existing record (a duplicate key, or a concurrent change). */
export class ConflictError extends AppError {
  constructor(message: string, code = 'conflict') {
    super(409, code, message);
    this.name = 'ConflictError';
  }
}

export const conflict = (message: string) => new ConflictError(message);

/** 429: the organization is at a limit for now; the answer carries `Retry-After`. */
export class TooManyRequestsError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    code = 'too_many_requests',
  ) {
    super(429, code, message);
    this.name = 'TooManyRequestsError';
  }
}

/** 402: the organization's credit balance is used up; an operator grants more (`cli credits grant`). */
export class InsufficientCreditsError extends AppError {
  constructor(
    organizationId: string,
    readonly balance: number,
  ) {
    super(
      402,
      'insufficient_credits',
      `organization ${organizationId} is out of credits (balance ${balance}); ask an operator to grant more`,
      { balance },
    );
    this.name = 'InsufficientCreditsError';
  }
}

/**
 * 502: the model server failed (`model_error`: an HTTP error, a timeout, no connection) or answered twice with
 * something we cannot use (`model_invalid_answer`). Not our bug, and not the caller's: a gateway error.
 */
export class ModelError extends AppError {
  constructor(
    message: string,
    code: 'model_error' | 'model_invalid_answer' = 'model_error',
    details?: unknown,
  ) {
    super(502, code, message, details);
    this.name = 'ModelError';
  }
}

/** The backing services whose outage makes a request impossible for now (`/healthz` names them too). */
export type Dependency = 'database' | 'temporal' | 'storage';

const DEPENDENCY_NAMES: Record<Dependency, string> = {
  database: 'database',
  temporal: 'workflow service (Temporal)',
  storage: 'object store (S3)',
};

/**
 * 503: a backing service is down or unreachable. Nothing was accepted; the same request (with the same
 * `requestId` / `Idempotency-Key`) may be sent again after `Retry-After` seconds.
 */
export class ServiceUnavailableError extends AppError {
  constructor(
    readonly dependency: Dependency,
    readonly retryAfterSeconds = SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS,
    message = `the ${DEPENDENCY_NAMES[dependency]} is unavailable; retry shortly`,
  ) {
    super(503, 'service_unavailable', message);
    this.name = 'ServiceUnavailableError';
  }
}

export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

// The driver's errors for "no server to talk to", by name: mongoose's own (a buffered command or the first
// connection) and the MongoDB driver's (server selection ran out, the socket broke, the pool was cleared).
const MONGO_UNAVAILABLE = new Set([
  'MongooseServerSelectionError',
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoPoolClearedError',
  'MongoNotConnectedError',
]);
// gRPC statuses for "the server is not there or did not answer in time": UNAVAILABLE and DEADLINE_EXCEEDED.
const GRPC_UNAVAILABLE = new Set([14, 4]);
// The object store's client (the AWS SDK, whose errors carry `$metadata`) when the store did not answer: its
// HTTP handler's deadlines, and the connection refused or cut.
const STORAGE_UNAVAILABLE = new Set(['TimeoutError', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/**
 * Which backing service an error says is unreachable, if any: the one place that knows the MongoDB driver's,
 * Temporal's (gRPC's) and the object store client's ways of saying so. Looks through `cause` chains (Temporal's client wraps the gRPC error
 * in a ServiceError).
 */
export function unavailableDependency(err: unknown): Dependency | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ServiceUnavailableError) return e.dependency;
    if (MONGO_UNAVAILABLE.has(e.name)) return 'database';
    const aws = e as Error & { $metadata?: unknown; code?: unknown };
    if (
      typeof aws.$metadata === 'object' &&
      (STORAGE_UNAVAILABLE.has(e.name) || STORAGE_UNAVAILABLE.has(String(aws.code)))
    )
      return 'storage';
    const grpc = e as Error & { code?: unknown; details?: unknown; metadata?: unknown };
    if (
      typeof grpc.code === 'number' &&
      GRPC_UNAVAILABLE.has(grpc.code) &&
      typeof grpc.details === 'string' &&
      typeof grpc.metadata === 'object'
    )
      return 'temporal';
  }
  return undefined;
}

/** The error as a ServiceUnavailableError when it says a backing service is unreachable. */
export function asServiceUnavailable(err: unknown): ServiceUnavailableError | undefined {
  if (err instanceof ServiceUnavailableError) return err;
  const dependency = unavailableDependency(err);
  return dependency ? new ServiceUnavailableError(dependency) : undefined;
}
