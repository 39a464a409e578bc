import type { RequestHandler } from 'express';
import { badRequest } from '@lib/errors';
import { jsonDepth, MAX_JSON_DEPTH } from '@lib/json-depth';

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
