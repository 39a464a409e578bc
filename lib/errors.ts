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
