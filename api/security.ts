import type { Request } from 'express';
import type { AppRuntimeService } from '@lib/artifacts/app-runtime.service';
import { requireUserSession, type Authenticator } from '@lib/auth/authenticator';
import type { RequestContext } from '@lib/auth/context';
import { isCapability } from '@lib/auth/roles';
import { forbidden, unauthorized } from '@lib/errors';
import { requireMetricsToken } from '@lib/observability/metrics-auth';
import { annotateLogContext } from '@lib/observability/log-context';

interface OperationMeta {
  'x-capability'?: unknown;
  'x-user-session-only'?: unknown;
}

type ValidatedRequest = Request & {
  openapi: { schema: OperationMeta; pathParams?: Record<string, string> };
};

/** The capability the operation declares in openapi.yaml (`x-capability`), which the caller must have. */
function requireCapability(req: Request, schema: OperationMeta, ctx: RequestContext) {
  const capability = schema['x-capability'];
  if (!isCapability(capability)) throw new Error(`operation ${req.path} declares no valid x-capability`);
  if (!ctx.capabilities.has(capability))
    throw forbidden(`role ${ctx.role} lacks the capability ${capability}`);
}

/**
 * The handlers of the app link schemes: `appSession` (the bridge's Authorization header) and `appSessionLink`
 * (the page URL's `session` parameter). The token must be one minted for this organization and artifact; the
 * request then acts for the member who opened the app, with `req.appSession` naming the version.
 */
export function appSessionAuthHandler(runtime: AppRuntimeService, from: 'header' | 'query') {
  return async (req: Request): Promise<boolean> => {
    try {
      const { openapi } = req as ValidatedRequest;
      const token =
        from === 'header'
          ? /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1]
          : (req.query as Record<string, unknown>).session;
      if (typeof token !== 'string' || !token) throw unauthorized('an app link token is required');
      const session = await runtime.authenticate(
        token,
        openapi.pathParams?.organizationId ?? '',
        openapi.pathParams?.artifactId ?? '',
      );
      requireCapability(req, openapi.schema, session.ctx);
      req.ctx = session.ctx;
      req.appSession = session;
      return true;
    } catch (err) {
      req.authError = err;
      throw err;
    }
  };
}

/**
 * The bearerAuth handler for express-openapi-validator: authenticates against the organization in the
 * path and enforces the capability the operation declares in openapi.yaml (`x-capability`).
 */
export function bearerAuthHandler(authenticator: Authenticator) {
  return async (req: Request): Promise<boolean> => {
    try {
      const { openapi: operation } = req as unknown as {
        openapi: { schema: OperationMeta; pathParams?: Record<string, string> };
      };
      const organizationId = operation.pathParams?.organizationId ?? '';
      const ctx = await authenticator.authenticate(req.headers.authorization, organizationId);
      requireCapability(req, operation.schema, ctx);
      if (operation.schema['x-user-session-only'] === true) requireUserSession(ctx);
      req.ctx = ctx;
      annotateLogContext({ organizationId: ctx.organizationId });
      return true;
    } catch (err) {
      req.authError = err;
      throw err;
    }
  };
}

/** The metricsToken handler (GET /metrics): the operator's METRICS_TOKEN, not an organization's credentials. */
export function metricsTokenAuthHandler(token: string | undefined) {
  return (req: Request): boolean => {
    try {
      requireMetricsToken(req.headers.authorization, token);
      return true;
    } catch (err) {
      req.authError = err;
      throw err;
    }
  };
}
