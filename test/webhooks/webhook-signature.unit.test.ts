import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { AppError } from '@lib/errors';
import { sign, verifySignature } from '@lib/webhooks/signature';

// The example delivery of the Standard Webhooks specification (standardwebhooks.com): its secret, id,
// timestamp and body, and the signature the specification publishes for them. The oracle is the published
// value, not our own sign().
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: '1614265330',
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const AT = Number(VECTOR.timestamp) * 1000;

function refusal(headers: { id: string; timestamp: string; signature: string }, body: string): string {
  try {
    verifySignature(VECTOR.secret, headers, Buffer.from(body), 300, AT);
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).status).to.equal(401);
    return (err as AppError).code;
  }
  return expect.fail('accepted');
}

describe('webhook signatures (Standard Webhooks)', () => {
  it('signs and accepts the specification’s example delivery', () => {
    expect(`v1,${sign(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)}`).to.equal(VECTOR.signature);
    verifySignature(VECTOR.secret, VECTOR, Buffer.from(VECTOR.body), 300, AT);
  });

  it('refuses the example signature over another body, and a signature that leaves the body out', () => {
    expect(refusal(VECTOR, '{"test": 2432232315}')).to.equal('invalid_signature');
    // HMAC of "<id>.<timestamp>." alone: a signer that skipped the body must not pass for any body
    const key = Buffer.from(VECTOR.secret.slice('whsec_'.length), 'base64');
    const bodiless = createHmac('sha256', key).update(`${VECTOR.id}.${VECTOR.timestamp}.`).digest('base64');
    expect(refusal({ ...VECTOR, signature: `v1,${bodiless}` }, VECTOR.body)).to.equal('invalid_signature');
  });

  /** The refusal of a delivery of the example body at `at` (ms), as [status code, error code, message]. */
  function refused(headers: { id?: string; timestamp?: string; signature?: string }, at = AT) {
    try {
      verifySignature(VECTOR.secret, headers, Buffer.from(VECTOR.body), 300, at);
    } catch (err) {
      const { status, code, message } = err as AppError;
      return [status, code, message];
    }
    return expect.fail('accepted');
  }

  it('needs all three headers, each on its own', () => {
    const missing = [
      401,
      'invalid_signature',
      'this webhook needs webhook-id, webhook-timestamp and webhook-signature headers',
    ];
    for (const left of ['id', 'timestamp', 'signature'] as const)
      expect(refused({ ...VECTOR, [left]: '' }), left).to.deep.equal(missing);
  });

  it('takes a timestamp of 1 to 12 digits only', () => {
    const bad = [401, 'invalid_signature', 'webhook-timestamp must be Unix seconds'];
    for (const timestamp of ['x1614265330', '1614265330x', '1614265330.5', '-1614265330', '1234567890123'])
      expect(refused({ ...VECTOR, timestamp }), timestamp).to.deep.equal(bad);
  });

  it('accepts a timestamp exactly 300 seconds away, and refuses one a second further as stale', () => {
    verifySignature(VECTOR.secret, VECTOR, Buffer.from(VECTOR.body), 300, AT + 300_000);
    verifySignature(VECTOR.secret, VECTOR, Buffer.from(VECTOR.body), 300, AT - 300_000);
    expect(refused(VECTOR, AT + 301_000)).to.deep.equal([
      401,
      'stale_signature',
      'webhook-timestamp is more than 300 seconds away from now (a replay, or a clock far off)',
    ]);
  });

  it('reads only v1 signatures with a value, and accepts the valid one among several', () => {
    const value = VECTOR.signature.slice('v1,'.length);
    const mismatch = [
      401,
      'invalid_signature',
      "webhook-signature does not match the body signed with this webhook's secret",
    ];
    expect(refused({ ...VECTOR, signature: `v2,${value}` })).to.deep.equal(mismatch);
    expect(refused({ ...VECTOR, signature: 'v1,' })).to.deep.equal(mismatch);
    expect(refused({ ...VECTOR, signature: 'v1' })).to.deep.equal(mismatch);
    // While a secret is rotated, the sender sends several: one valid v1 signature is enough.
    verifySignature(
      VECTOR.secret,
      { ...VECTOR, signature: `v2,${value} v1,AAAA ${VECTOR.signature}` },
      Buffer.from(VECTOR.body),
      300,
      AT,
    );
  });
});
