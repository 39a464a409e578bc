import { z } from 'zod';
import { bool, int, MB, unsetIfEmpty } from './kinds';

/** The service's servers, identity and observability. */
export const infrastructure = {
  'Service and logging': {
    NODE_ENV: z
      .string()
      .default('development')
      .describe("read by dependencies (Express, for one); the service's own rules do not depend on it"),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('pino level (`silent` in tests); credentials and cookies are always redacted'),
    PORT: int().min(0).max(65535).default(3000).describe('HTTP port (socket.io shares it)'),
    PUBLIC_BASE_URL: z
      .string()
      .url()
      .default('http://127.0.0.1:3000')
      .describe("the API's public address: mail links, app links, the app bridge and its `connect-src`"),
    JSON_BODY_LIMIT: z.string().default('1mb').describe('request body limit'),
    VALIDATE_RESPONSES: bool.describe(
      'check every answer against `openapi.yaml` too: one that breaks the contract becomes an error (the tests turn it on)',
    ),
    ALLOW_PRIVATE_OUTBOUND: bool.describe(
      'let callbacks and `http_request` reach private, loopback and link-local addresses (development only)',
    ),
  },
  'Database, Temporal and workers': {
    MONGODB_URI: z
      .string()
      .min(1)
      .default('mongodb://127.0.0.1:27017/agent_workspace')
      .describe('MongoDB (or Mongo-wire) database; `npm start` runs the local embedded one'),
    TEMPORAL_ADDRESS: z
      .string()
      .min(1)
      .default('127.0.0.1:7233')
      .describe('Temporal frontend; `npm start` runs the local dev server'),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default').describe('Temporal namespace'),
    TEMPORAL_TASK_QUEUE: z
      .string()
      .min(1)
      .default('agent-workspace')
      .describe('task queue of the worker (the interactive queue is named after it)'),
    TEMPORAL_UI_URL: z.string().url().optional().describe('the Temporal UI, shown at start'),
    WORKER_MAX_CONCURRENT_ACTIVITIES: int()
      .positive()
      .default(50)
      .describe('background activity slots of a worker'),
    WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: int()
      .positive()
      .default(40)
      .describe('background workflow-task slots of a worker'),
    WORKER_INTERACTIVE_MAX_CONCURRENT_ACTIVITIES: int()
      .positive()
      .default(50)
      .describe("the interactive queue's own activity slots (chat turns), apart from the background ones"),
    WORKER_INTERACTIVE_MAX_CONCURRENT_WORKFLOW_TASKS: int()
      .positive()
      .default(20)
      .describe("the interactive queue's own workflow-task slots"),
    WORKER_MAX_CACHED_WORKFLOWS: int()
      .positive()
      .default(500)
      .describe(
        "workflows each of a worker's two queues keeps in memory between their tasks (Temporal's sticky cache, which keeps finished ones until it needs the place); the SDK's default follows the heap limit, 2,395 each on a 4 GB heap",
      ),
    WORKER_BACKGROUND_SLOTS_WHILE_INTERACTIVE: int()
      .positive()
      .default(2)
      .describe(
        "background slots of each kind a worker holds while it runs a chat turn's task, and for a second after (turns first, [Admission](admission.md))",
      ),
  },
  'Deadlines on every dependency': {
    TEMPORAL_RPC_TIMEOUT_MS: int()
      .min(1000)
      .default(10_000)
      .describe(
        'a Temporal call (starts, signals, visibility, schedules; not the long polls that wait for a result)',
      ),
    DB_SOCKET_TIMEOUT_MS: int()
      .min(1000)
      .default(15_000)
      .describe(
        'a database socket with nothing to read this long fails its operation; longer than `TABLE_QUERY_TIMEOUT_MS`',
      ),
    REDIS_COMMAND_TIMEOUT_MS: int()
      .min(100)
      .default(5000)
      .describe(
        "a Redis command (Redis is an optimization: what it does not answer in time is done without it); well above an event loop's pauses",
      ),
    S3_REQUEST_TIMEOUT_MS: int()
      .min(1000)
      .default(10_000)
      .describe(
        'an object-store request this long without a byte either way fails an attempt (the SDK makes three)',
      ),
    SMTP_TIMEOUT_MS: int()
      .min(1000)
      .default(30_000)
      .describe('connecting to the mail relay, its greeting, and then this long without a byte either way'),
  },
  'Object storage': {
    S3_ENDPOINT: z
      .string()
      .url()
      .optional()
      .describe('S3 endpoint (unset: AWS); `npm start` runs local SeaweedFS'),
    S3_REGION: z.string().default('us-east-1').describe('S3 region'),
    S3_BUCKET: z.string().min(1).default('agent-workspace').describe('the bucket of files and artifacts'),
    S3_ACCESS_KEY_ID: z
      .string()
      .optional()
      .describe('S3 credentials (`npm start`: generated once into `.data/secrets.json`)'),
    S3_SECRET_ACCESS_KEY: z.string().optional().describe('S3 credentials, a secret'),
    S3_FORCE_PATH_STYLE: bool.describe('path-style S3 addresses; default: `true` when `S3_ENDPOINT` is set'),
    S3_PUBLIC_ENDPOINT: z
      .string()
      .url()
      .optional()
      .describe(
        'the S3 address in signed upload and download URLs (what clients reach); default: `S3_ENDPOINT`',
      ),
  },
  'Realtime and mail': {
    REDIS_URL: z
      .string()
      .min(1)
      .default('redis://127.0.0.1:6379')
      .describe('Redis (socket.io fan-out, admission counters, caches)'),
    SMTP_URL: z
      .string()
      .min(1)
      .default('smtp://127.0.0.1:2525')
      .describe('outbound mail relay (`npm start`: the local mail sink)'),
    MAIL_FROM: z
      .string()
      .min(3)
      .default('Agent Workspace <no-reply@agent-workspace.local>')
      .describe('sender of service mail'),
    INBOUND_SMTP_PORT: int()
      .min(0)
      .max(65535)
      .optional()
      .describe("the API listens for agents' inbound mail on this port when set (`npm start`: `2526`)"),
    INBOUND_SMTP_HOST: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe('address the inbound listener binds (`0.0.0.0` to take mail from outside)'),
    INBOUND_EMAIL_MAX_BYTES: int()
      .positive()
      .default(25 * MB)
      .describe('largest inbound message (bytes; SIZE is advertised, larger ones are refused with `552`)'),
    INBOUND_SMTP_TLS_KEY_FILE: z
      .string()
      .optional()
      .describe('PEM key file: offer STARTTLS on the inbound listener (with the certificate)'),
    INBOUND_SMTP_TLS_CERT_FILE: z
      .string()
      .optional()
      .describe('PEM certificate file for STARTTLS (with the key)'),
    AGENT_EMAIL_DOMAINS: z
      .string()
      .default('')
      .describe(
        "comma-separated mail domains agents' addresses may use (`400 email_domain_not_allowed` outside). Unset: none, so an agent never takes a person's address (`npm start`, docker-compose: `agents.localhost`)",
      ),
    INBOUND_TRUSTED_RELAYS: z
      .string()
      .default('')
      .describe(
        'comma-separated authserv-ids whose `Authentication-Results` this service trusts: inbound mail acts as a member only with `dmarc=pass` for its From domain from one of them. Unset: only when the envelope sender equals the From address',
      ),
  },
  Identity: {
    JWT_SECRET: z
      .string()
      .min(32, 'JWT_SECRET must be at least 32 characters')
      .describe(
        'signing key of sessions and assume-role tokens (at least 32 characters, a secret; `npm start` and `npm test` generate one into `.data/secrets.json`)',
      ),
    JWT_ISSUER: z.string().default('agent-workspace').describe('issuer of the tokens this service signs'),
    SESSION_TTL_SECONDS: int()
      .positive()
      .default(12 * 3600)
      .describe('lifetime of a session token'),
    CREDENTIAL_CACHE_TTL_MS: int()
      .min(0)
      .max(300_000)
      .default(10_000)
      .describe(
        "how long an API key's record and a membership read to authenticate may be reused (`0`: read on every request). A write drops them at once everywhere (Redis pub/sub); this bounds a change never announced",
      ),
    OIDC_ISSUER: z
      .string()
      .url()
      .optional()
      .describe('accept sessions from this external OIDC issuer (needs `OIDC_AUDIENCE`)'),
    OIDC_JWKS_URL: z
      .string()
      .url()
      .optional()
      .describe("the issuer's JWKS (default: `<OIDC_ISSUER>/.well-known/jwks.json`)"),
    OIDC_AUDIENCE: z.string().optional().describe('the audience an OIDC token must carry'),
  },
  Observability: {
    METRICS_TOKEN: unsetIfEmpty(
      z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
    ).describe(
      "the operator's bearer token for `GET /metrics` (API and worker), a secret; unset, `/metrics` is 404",
    ),
    WORKER_METRICS_PORT: unsetIfEmpty(int().min(0).max(65535).optional()).describe(
      'the worker serves `GET /metrics` on this port (needs `METRICS_TOKEN`)',
    ),
    OTEL_EXPORTER_OTLP_ENDPOINT: unsetIfEmpty(z.string().url().optional()).describe(
      'export traces over OTLP/HTTP to `<endpoint>/v1/traces`; unset, tracing is off',
    ),
    OTEL_SERVICE_NAME: unsetIfEmpty(z.string().min(1).optional()).describe(
      '`service.name` of the exported spans (default: `agent-workspace-api` / `agent-workspace-worker`)',
    ),
  },
} satisfies Record<string, Record<string, z.ZodTypeAny>>;
