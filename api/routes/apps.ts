import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { AppSession } from '@lib/artifacts/app-runtime.service';
import type { Deps } from '@lib/deps';
import { unauthorized } from '@lib/errors';
import { param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

declare module 'express-serve-static-core' {
  interface Request {
    /** The open app a bridge call or page load comes from (set by the app session security handlers). */
    appSession?: AppSession;
  }
}

function sessionOf(req: Request): AppSession {
  if (!req.appSession) throw unauthorized('an app link token is required');
  return req.appSession;
}

/** The bridge's operations (not the page itself). */
const BRIDGE_PATH = /^\/orgs\/[^/]+\/artifacts\/[^/]+\/app\/./;

/**
 * CORS for the bridge: the sandboxed page has an opaque origin (`Origin: null`), so its calls are
 * cross-origin. They carry the app token in Authorization and never cookies, so any origin may send them;
 * preflights are answered here, before the contract's validation (which knows no OPTIONS).
 */
export function appBridgeCors(): RequestHandler {
  return (req, res, next) => {
    if (!BRIDGE_PATH.test(req.path)) {
      next();
      return;
    }
    res.set('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') {
      res.set('Access-Control-Allow-Methods', 'GET, POST');
      res.set('Access-Control-Allow-Headers', 'Authorization, Content-Type');
      res.set('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}

export function appsHandlers(deps: Deps): OperationHandlers {
  const { appRuntime } = deps.services;
  const table = (req: Request) => param(req, 'tableName');
  return {
    async getAppPage(req, res) {
      const page = await appRuntime.page(sessionOf(req), deps.config.publicBaseUrl);
      res
        .status(200)
        .set({
          'Content-Type': 'text/html; charset=utf-8',
          'Content-Security-Policy': page.contentSecurityPolicy,
          'Referrer-Policy': 'no-referrer',
          'X-Content-Type-Options': 'nosniff',
          'Cache-Control': 'no-store',
        })
        .send(page.html);
    },
    async queryAppTableRows(req, res) {
      const q = req.query as Record<string, string | number | undefined>;
      res.json(
        await appRuntime.queryRows(sessionOf(req), table(req), {
          limit: q.limit === undefined ? 20 : Number(q.limit),
          offset: q.offset === undefined ? 0 : Number(q.offset),
          orderBy: q.orderBy as string | undefined,
          filters: q.filters as string | undefined,
        }),
      );
    },
    async insertAppTableRows(req, res) {
      const { rows } = req.body as { rows: unknown[] };
      res.json(await appRuntime.insertRows(sessionOf(req), table(req), rows));
    },
    async runAppWorkflow(req, res) {
      const body = (req.body as { input?: Record<string, unknown>; requestId?: string } | undefined) ?? {};
      res.status(202).json(
        await appRuntime.runWorkflow(sessionOf(req), param(req, 'workflowId'), {
          input: body.input,
          requestId: body.requestId ?? randomUUID(),
        }),
      );
    },
  };
}
