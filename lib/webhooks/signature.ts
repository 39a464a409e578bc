import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '@lib/errors';

/**
 * Standard Webhooks signatures (standardwebhooks.com): the sender signs `<webhook-id>.<webhook-timestamp>.<body>`
 * with HMAC-SHA256 under the secret's bytes and sends `webhook-signature: v1,<base64>` (several, space-separated,
 * while a secret is being rotated). The timestamp (Unix seconds) must be within the replay window of now.
 */
export const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

export function sign(secret: string, id: string, timestamp: string, body: Buffer | string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

const refused = (message: string, code = 'invalid_signature') => new AppError(401, code, message);

export interface SignatureHeaders {
  id?: string;
  timestamp?: string;
  signature?: string;
}

/** 401 unless the delivery carries a valid signature made within `toleranceSeconds` of `now`. */
export function verifySignature(
  secret: string,
  headers: SignatureHeaders,
  body: Buffer,
  toleranceSeconds: number,
  now = Date.now(),
): void {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature)
    throw refused('this webhook needs webhook-id, webhook-timestamp and webhook-signature headers');
  if (!/^\d{1,12}$/.test(timestamp)) throw refused('webhook-timestamp must be Unix seconds');
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds)
    throw refused(
      `webhook-timestamp is more than ${toleranceSeconds} seconds away from now (a replay, or a clock far off)`,
      'stale_signature',
    );
  const expected = Buffer.from(sign(secret, id, timestamp, body), 'base64');
  const matches = signature.split(' ').some((part) => {
    const [version, value] = part.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw refused("webhook-signature does not match the body signed with this webhook's secret");
}
