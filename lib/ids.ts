import { randomBytes } from 'node:crypto';

/** Opaque string ids with a readable prefix, e.g. `org_3kTq9…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
