import type { Request } from 'express';
import { requireUserSession, type Authenticator } from '@lib/auth/authenticator';
import { isCapability } from '@lib/auth/roles';
import { forbidden } from '@lib/errors';

interface OperationMeta {
  'x-capability'?: unknown;
  'x-user-session-only'?: unknown;
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
      const capability = operation.schema['x-capability'];
      if (!isCapability(capability)) throw new Error(`operation ${req.path} declares no valid x-capability`);
      if (!ctx.capabilities.has(capability))
        throw forbidden(`role ${ctx.role} lacks the capability ${capability}`);
      if (operation.schema['x-user-session-only'] === true) requireUserSession(ctx);
      req.ctx = ctx;
      return true;
    } catch (err) {
      req.authError = err;
      throw err;
    }
  };
}
