import { expect } from 'chai';
import { AppError } from '@lib/errors';

/**
 * Asserts the answer to a request naming, in its body or query, a resource that is missing or not visible to
 * the caller: 400 `invalid_reference`, its message naming the field.
 */
export const invalidReference =
  (field: string) => (res: { status: number; body: { error?: { code: string; message: string } } }) => {
    expect(res.status).to.equal(400);
    expect(res.body.error?.code).to.equal('invalid_reference');
    expect(res.body.error?.message).to.match(new RegExp(`^${field}: `));
  };

/** The AppError a service call is refused with; fails the test when the call succeeds or throws anything else. */
export async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(AppError);
  return err as AppError;
}
