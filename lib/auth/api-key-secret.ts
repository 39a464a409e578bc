import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'awk_';
const ID_HEX_LENGTH = 24;

/**
 * A new API key: `awk_` + 24 hex characters naming the record + a 256-bit secret. Only the hash of the whole
 * key is stored. Carrying the record id lets authentication read the record by primary key.
 */
export function generateApiKey(): { apiKeyId: string; key: string; keyHash: string; keyPrefix: string } {
  const idHex = randomBytes(ID_HEX_LENGTH / 2).toString('hex');
  const key = API_KEY_PREFIX + idHex + randomBytes(32).toString('base64url');
  return { apiKeyId: `key_${idHex}`, key, keyHash: hashApiKey(key), keyPrefix: key.slice(0, 12) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The record id a key names, or null when it is not shaped like one of our keys. */
export function apiKeyIdOf(key: string): string | null {
  const idHex = key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + ID_HEX_LENGTH);
  return key.startsWith(API_KEY_PREFIX) && /^[0-9a-f]{24}$/.test(idHex) ? `key_${idHex}` : null;
}

/** Compares a presented key with a stored hash in constant time. */
export function apiKeyMatches(key: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
