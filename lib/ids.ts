import { randomBytes } from 'node:crypto';

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
