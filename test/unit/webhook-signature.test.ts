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
});
