import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'awk_';

/** A new API key value; only its hash is stored. */
export function generateApiKey(): { key: string; keyHash: string; keyPrefix: string } {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, keyHash: hashApiKey(key), keyPrefix: key.slice(0, 10) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
