import { createServer } from 'node:http';
import express, { Router, type Express, type Request, type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { pinoHttp } from 'pino-http';
import type { Deps } from '@lib/deps';
import { openApiSpecPath } from '@lib/spec';
import { methodDeclaredAt } from './declared-methods';
import { docsRouter } from './docs';
import { errorHandler } from './error-handler';
import { jsonDepthLimit } from './json-depth';
import { httpMetrics, httpTracing, requestContext, requestIdOf, routeOf } from './observability';
import { mountOperations } from './operations';
import { agentsHandlers } from './routes/agents';
import { analysesHandlers } from './routes/analyses';
import { appBridgeCors, appsHandlers } from './routes/apps';
import { artifactBodyParser, artifactsHandlers } from './routes/artifacts';
import { apiKeysHandlers } from './routes/api-keys';
import { assumeRoleHandlers } from './routes/assume-role';
import { chainsHandlers } from './routes/chains';
import { chainsFromPromptHandlers } from './routes/chains-from-prompt';
import { conversationsHandlers } from './routes/conversations';
import { creditsHandlers } from './routes/credits';
import { etlRulesHandlers } from './routes/etl-rules';
import { groupsHandlers } from './routes/groups';
import { knowledgeBasesHandlers } from './routes/knowledge-bases';
import { organizationHandlers } from './routes/organization';
import { schedulesHandlers } from './routes/schedules';
import { tablesBatchBodyParser, tablesHandlers } from './routes/tables';
import { taskPlansHandlers } from './routes/task-plans';
import { browserSessionsHandlers } from './routes/browser-sessions';
import { toolsHandlers } from './routes/tools';
import { usersHandlers } from './routes/users';
import { metricsHandlers } from './routes/metrics';
import { webhookBodyParser, webhooksHandlers } from './routes/webhooks';
import { narrowValidatorRouteLookup, patchValidator } from './validator';
import { appSessionAuthHandler, bearerAuthHandler, metricsTokenAuthHandler } from './security';

/** A request's log line says what happened, in a glance: `GET /orgs/{organizationId}/agents 200 12 ms`. */
const requestLine = (req: Request, res: { statusCode: number }, ms?: number) =>
  `${req.method} ${routeOf(req)} ${res.statusCode}${ms === undefined ? '' : ` ${Math.round(ms)} ms`}`;

/** The methods openapi.yaml gives a request body. Any other method's body is never parsed, nor is the body of a
 * method its path does not declare: that is a 405 naming the path's methods (not a 400 about its body), and
 * OPTIONS is answered for the whole path, not by a body parser's router that knows one of its methods. */
const BODY_METHODS = new Set(['POST', 'PUT']);

/** Whether a request carries a body to parse, as the body parsers decide it (type-is `hasBody`). */
function hasBody(req: Request, declared: (method: string, url: string) => boolean): boolean {
  if (!BODY_METHODS.has(req.method) || !declared(req.method, req.originalUrl)) return false;
  return req.headers['transfer-encoding'] !== undefined || !isNaN(Number(req.headers['content-length']));
}

/** Builds the HTTP app: every request is validated against openapi.yaml before a handler sees it. */
export function createApp(deps: Deps): Express {
  const app = express();
  app.disable('x-powered-by');
  // The request id and its log context first: every later middleware and handler logs inside it.
  app.use(requestContext());
  app.use(httpMetrics(deps.metrics));
  if (deps.tracing) app.use(httpTracing(deps.tracing));
  // With logging off, skip the per-request child logger entirely (it costs CPU even when silent).
  if (deps.logger.level !== 'silent') {
    app.use(
      pinoHttp({
        logger: deps.logger,
        genReqId: (req) => req.id ?? requestIdOf(req as Parameters<typeof requestIdOf>[0]),
        // Read when the response ends (and, undefined, when it starts): who asked, and what they asked for.
        customProps: (req) => ({
          organizationId: req.ctx?.organizationId,
          userId: req.ctx?.userId,
          route: (req as { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute,
        }),
        // One short line per request: the route template, never the URL (an app link's token rides in its
        // query) nor the headers (credentials, and most of every line). Health probes come every few seconds
        // and would bury everything else.
        autoLogging: { ignore: (req) => req.url === '/healthz' },
        serializers: {
          req: (req: { method: string }) => ({ method: req.method }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
        customSuccessMessage: (req, res, ms) => requestLine(req as Request, res, ms),
        customErrorMessage: (req, res) => requestLine(req as Request, res),
      }),
    );
  }
  app.use(appBridgeCors());
  // Body parsing, only for requests with a body (the parsers' routers cost every GET a pass otherwise). Batch row
  // inserts get their own, larger body limit (see routes/tables.ts); everything else this one.
  const declared = methodDeclaredAt();
  const withBody = (...handlers: RequestHandler[]) => {
    const parse = Router().use(handlers);
    const handler: RequestHandler = (req, res, next) =>
      hasBody(req, declared) ? parse(req, res, next) : next();
    return handler;
  };
  app.use(
    withBody(
      tablesBatchBodyParser(),
      artifactBodyParser(deps.config.artifacts.maxBytes),
      // Webhook deliveries: any JSON, their own size limit, the raw bytes kept for signatures.
      webhookBodyParser(deps.config.webhooks.bodyLimit),
      express.json({ limit: deps.config.jsonBodyLimit }),
      jsonDepthLimit(),
    ),
  );
  app.use(docsRouter());
  patchValidator();
  const validator = OpenApiValidator.middleware({
    apiSpec: openApiSpecPath(),
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: deps.config.validateResponses,
    validateSecurity: {
      handlers: {
        bearerAuth: bearerAuthHandler(deps.authenticator),
        appSession: appSessionAuthHandler(deps.services.appRuntime, 'header'),
        appSessionLink: appSessionAuthHandler(deps.services.appRuntime, 'query'),
        metricsToken: metricsTokenAuthHandler(deps.config.observability.metricsToken),
      },
    },
  });
  narrowValidatorRouteLookup(OpenApiValidator.middleware);
  app.use(validator);
  mountOperations(app, {
    ...organizationHandlers(deps),
    ...usersHandlers(deps),
    ...groupsHandlers(deps),
    ...apiKeysHandlers(deps),
    ...assumeRoleHandlers(deps),
    ...tablesHandlers(deps),
    ...conversationsHandlers(deps),
    ...taskPlansHandlers(deps),
    ...analysesHandlers(deps),
    ...browserSessionsHandlers(deps),
    ...agentsHandlers(deps),
    ...toolsHandlers(deps),
    ...knowledgeBasesHandlers(deps),
    ...etlRulesHandlers(deps),
    ...chainsHandlers(deps),
    ...creditsHandlers(deps),
    ...chainsFromPromptHandlers(deps),
    ...artifactsHandlers(deps),
    ...appsHandlers(deps),
    ...schedulesHandlers(deps),
    ...webhooksHandlers(deps),
    ...metricsHandlers(deps),
  });
  app.use(errorHandler(deps.logger));
  return app;
}

/**
 * The HTTP server for the app. Its header limit (which includes the URL) fits the longest query the contract
 * allows: `filters` (4000 characters) and `orderBy` (2000), each character up to 4 UTF-8 bytes percent-encoded
 * as 12, is 72 KB; Node's default 16 KB would answer such a request with a bare 431.
 */
export function createHttpServer(app: Express) {
  return createServer({ maxHeaderSize: 128 * 1024 }, app);
}
