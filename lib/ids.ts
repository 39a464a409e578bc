import { createHash, randomBytes } from 'node:crypto';

let lastSeq = 0;
/** An ordering key: microseconds since the epoch, strictly increasing within this process, so records written in
 * the same millisecond keep the order they were written in (createdAt has millisecond resolution and ids are
 * random). */
export function nextSeq(): number {
  lastSeq = Math.max(lastSeq + 1, Date.now() * 1000);
  return lastSeq;
}

/** Opaque string ids with a readable prefix, e.g. `org_3kTq9…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

/**
 * An id derived from what makes a record unique (for example an organization, a request and a tool call), so a
 * retry finds the record its first attempt made: `<prefix>_` and the first `length` characters of the base64url
 * SHA-256 of the parts joined by newlines. Ids already stored were made this way: the rule must never change.
 */
export function derivedId(prefix: string, parts: readonly string[], length = 22): string {
  return `${prefix}_${createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, length)}`;
}
