import type { RequestHandler } from 'express';
import { badRequest } from '@lib/errors';

/** Request bodies nest at most this deep (objects and arrays); deeper is a 400. */
export const MAX_JSON_DEPTH = 32;

/** The nesting depth of a parsed JSON value, without recursion (a hostile body must not exhaust the stack). */
export function jsonDepth(value: unknown, stopAt = Infinity): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    max = Math.max(max, depth + 1);
    if (max > stopAt) return max;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return max;
}

/** Refuses bodies nested deeper than MAX_JSON_DEPTH before any handler walks them recursively. */
export function jsonDepthLimit(): RequestHandler {
  return (req, _res, next) => {
    if (jsonDepth(req.body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      next(badRequest(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`));
      return;
    }
    next();
  };
}
