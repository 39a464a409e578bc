import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { pinoHttp } from 'pino-http';
import type { Deps } from '@lib/deps';
import { openApiSpecPath } from '@lib/spec';
import { docsRouter } from './docs';
import { errorHandler } from './error-handler';
import { apiKeysRouter } from './routes/api-keys';
import { assumeRoleRouter } from './routes/assume-role';
import { groupsRouter } from './routes/groups';
import { organizationRouter } from './routes/organization';
import { systemRouter } from './routes/system';
import { usersRouter } from './routes/users';
import { bearerAuthHandler } from './security';

/** Builds the HTTP app: every request is validated against openapi.yaml before a handler sees it. */
export function createApp(deps: Deps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (req) => {
        const given = req.headers['x-request-id'];
        return typeof given === 'string' && given.length <= 100 ? given : randomUUID();
      },
      customProps: (req) => ({ organizationId: req.ctx?.organizationId, userId: req.ctx?.userId }),
    }),
  );
  app.use(express.json({ limit: deps.config.jsonBodyLimit }));
  app.use(docsRouter());
  app.use(
    OpenApiValidator.middleware({
      apiSpec: openApiSpecPath(),
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: deps.config.validateResponses,
      validateSecurity: { handlers: { bearerAuth: bearerAuthHandler(deps.authenticator) } },
    }),
  );
  for (const router of [systemRouter, organizationRouter, usersRouter, groupsRouter, apiKeysRouter, assumeRoleRouter]) {
    app.use(router(deps));
  }
  app.use(errorHandler(deps.logger));
  return app;
}
