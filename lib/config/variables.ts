import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { DEFAULT_PARSE_LIMITS as PARSE } from '../knowledge-bases/parsing/limits';

// Every setting of the service, read from the environment once and validated here. Each variable's
// `.describe()` is its documentation: docs/configuration.md is generated from these sections
// (`node --import tsx stack/config-docs.mjs`), and lint fails when the two differ.

const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1')
  .optional();

/** An empty value (`VAR=` in a compose file) means unset. */
const unsetIfEmpty = <T extends z.ZodTypeAny>(t: T) => z.preprocess((v) => (v === '' ? undefined : v), t);

const MB = 1024 * 1024;
const int = () => z.coerce.number().int();

/** The variables in the order and sections docs/configuration.md shows them. */
export const sections = {
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
  'Knowledge bases': {
    KB_MAX_FILE_BYTES: int()
      .positive()
      .default(100 * MB)
      .describe(
        'largest knowledge-base file (bytes); larger uploads are deleted and end in `ERROR`; a declared `sizeBytes` over it is `400`',
      ),
    KB_PARSE_TIMEOUT_MS: int()
      .positive()
      .max(1_200_000)
      .default(PARSE.timeoutMs)
      .describe(
        "time one file's parse may work, waits for the vision model not counted; then `ERROR`. At most 20 minutes: the parse activity's own timeout (30 minutes) stays the larger",
      ),
    KB_PARSE_MAX_HEAP_MB: int()
      .min(32)
      .default(PARSE.maxHeapMb)
      .describe(
        'V8 heap of the process a file is parsed in (MB); a parse that needs more ends in `ERROR`, the worker lives on',
      ),
    KB_PARSE_CONCURRENCY: int()
      .positive()
      .max(64)
      .default(2)
      .describe('files one worker process parses at once (one child process each)'),
    KB_PARSE_MAX_TEXT_CHARS: int()
      .positive()
      .default(PARSE.maxTextChars)
      .describe('characters of text one file may yield; more ends in `ERROR`'),
    KB_PDF_MAX_PAGES: int()
      .positive()
      .default(PARSE.maxPdfPages)
      .describe('pages of a PDF; more ends in `ERROR` before any page is read'),
    KB_XML_MAX_DEPTH: int()
      .positive()
      .max(1000)
      .default(PARSE.maxXmlDepth)
      .describe('element nesting of an XML file; deeper ends in `ERROR`'),
    KB_ZIP_MAX_ENTRIES: int()
      .positive()
      .default(PARSE.maxZipEntries)
      .describe('entries of a zip container (DOCX); more ends in `ERROR` before inflating'),
    KB_ZIP_MAX_UNCOMPRESSED_BYTES: int()
      .positive()
      .default(PARSE.maxZipBytes)
      .describe(
        "declared uncompressed size of a zip's entries together (bytes); more ends in `ERROR` before inflating",
      ),
    KB_ZIP_MAX_RATIO: z.coerce
      .number()
      .positive()
      .default(PARSE.maxZipRatio)
      .describe(
        'times its compressed size an entry over 1 MB may inflate to; more ends in `ERROR` before inflating',
      ),
    VISION_MODEL: z
      .string()
      .min(1)
      .default('gpt-4o-mini')
      .describe(
        'the vision-capable model that reads images (and PDF pages with `parseStrategy` `llm-vision`)',
      ),
    EMBEDDINGS_PROVIDER: z
      .enum(['local', 'openai'])
      .default('local')
      .describe('`local`: all-MiniLM-L6-v2 in-process (offline, no key); `openai`: the embeddings API'),
    EMBEDDING_MODEL: z
      .string()
      .min(1)
      .default('text-embedding-3-small')
      .describe('the OpenAI-compatible embedding model (`EMBEDDINGS_PROVIDER=openai`)'),
    LOCAL_EMBEDDING_MODEL_DIR: z
      .string()
      .optional()
      .describe('folder of the local embedding model (`model.onnx` and tokenizer; provisioned by the stack)'),
    VECTOR_STORE: z
      .enum(['lancedb', 'pinecone'])
      .default('lancedb')
      .describe('`lancedb`: embedded, on disk in `VECTOR_DIR`; `pinecone`: Pinecone'),
    VECTOR_DIR: z
      .string()
      .min(1)
      .default('.data/vectors')
      .describe('LanceDB folder (shared by the API and one worker)'),
    PINECONE_API_KEY: z.string().optional().describe('the Pinecone key, a secret'),
    PINECONE_INDEXES: z
      .string()
      .optional()
      .describe(
        'JSON map from embedding model id to its Pinecone index: `{"openai:text-embedding-3-small":{"name":"kb-small","host":"<optional>"}}`',
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
  'Models and credits': {
    LLM_PROVIDER: z
      .enum(['openai', 'local'])
      .optional()
      .describe(
        '`openai`: the OpenAI-compatible server at `OPENAI_BASE_URL`; `local`: the in-process local model ([Models](agents.md#models)). Default: `openai` when `OPENAI_API_KEY` is set, else `local`',
      ),
    OPENAI_BASE_URL: z
      .string()
      .url()
      .default('https://api.openai.com/v1')
      .describe('the OpenAI-compatible model server'),
    OPENAI_API_KEY: z.string().default('').describe('its key, a secret'),
    LOCAL_LLM_MODEL_PATH: z
      .string()
      .optional()
      .describe("the local chat model's GGUF file (provisioned by the stack)"),
    LOCAL_LLM_THREADS: int()
      .positive()
      .max(64)
      .default(Math.max(1, Math.min(4, availableParallelism() - 1)))
      .describe(
        "CPU threads of the local model; llama.cpp's threads spin, so more threads than free cores is far slower",
      ),
    LOCAL_LLM_CONTEXT_SIZE: int()
      .min(512)
      .max(32768)
      .default(4096)
      .describe('tokens of prompt and answer one local call may hold (older messages are left out to fit)'),
    LOCAL_LLM_MAX_TOKENS: int()
      .positive()
      .max(8192)
      .default(512)
      .describe('answer tokens of one local call unless the request asks for fewer'),
    LOCAL_LLM_CONCURRENCY: int()
      .positive()
      .max(16)
      .default(1)
      .describe('local calls running at once per process (each its own context sequence); the rest queue'),
    CHAIN_MODEL: z.string().min(1).default('gpt-4o-mini').describe('the model chain steps answer with'),
    CHAIN_GENERATION_MODEL: z
      .string()
      .min(1)
      .default('gpt-4o-mini')
      .describe('the model that writes a chain step from a prompt (`POST /orgs/{org}/chains/from-prompt`)'),
    CHAIN_GENERATION_TIMEOUT_MS: int()
      .positive()
      .max(600_000)
      .default(60_000)
      .describe('the longest one generation call may take (then `502 model_error`)'),
    CREDITS_STARTING_BALANCE: int()
      .min(0)
      .max(1_000_000_000)
      .default(10_000)
      .describe('credits a new organization starts with'),
    CREDITS_PER_1K_PROMPT_TOKENS: int()
      .min(0)
      .max(1_000_000)
      .default(10)
      .describe(
        'credits per 1,000 prompt tokens; a model call costs ceil((prompt tokens × this + completion tokens × `CREDITS_PER_1K_COMPLETION_TOKENS`) / 1000)',
      ),
    CREDITS_PER_1K_COMPLETION_TOKENS: int()
      .min(0)
      .max(1_000_000)
      .default(40)
      .describe('credits per 1,000 completion tokens'),
  },
  'Admission and turns': {
    MAX_CONCURRENT_TURNS_PER_ORG: int()
      .positive()
      .default(20)
      .describe(
        'chat turns one organization may have running; a message beyond is `429 too_many_turns` with `Retry-After: 5`',
      ),
    ADMISSION_MAX_WEBHOOK_DELIVERIES: int()
      .positive()
      .default(200)
      .describe(
        'unfinished webhook deliveries one organization may have; beyond, `429 backlog_full` ([Admission](admission.md); operators override per organization with `cli admission set`)',
      ),
    ADMISSION_MAX_CHAIN_RUNS: int().positive().default(200).describe('the same for chain runs'),
    ADMISSION_MAX_INGESTIONS: int().positive().default(50).describe('the same for file ingestions'),
    ADMISSION_MAX_SCHEDULE_FIRES: int()
      .positive()
      .default(50)
      .describe('the same for schedule fires (a fire beyond it is recorded `skipped`)'),
    ADMISSION_MAX_ANALYSES: int().positive().default(20).describe('the same for analyses'),
    ADMISSION_RETRY_AFTER_SECONDS: int()
      .positive()
      .max(3600)
      .default(5)
      .describe('the `Retry-After` of a `429 backlog_full`'),
    ADMISSION_RECONCILE_INTERVAL_MS: int()
      .min(1000)
      .default(60_000)
      .describe('how often a worker frees the slots of executions that ended unreported'),
  },
  'Tables, artifacts and apps': {
    TABLE_QUERY_TIMEOUT_MS: int()
      .positive()
      .default(5000)
      .describe('longest a table row query may run (MongoDB `maxTimeMS`); beyond, `400 query_timeout`'),
    TABLE_PAGE_MAX_BYTES: int()
      .positive()
      .default(32 * MB)
      .describe(
        'stored row data one page of rows may hold; beyond, `400 page_too_large` (ask for fewer rows)',
      ),
    ARTIFACT_MAX_BYTES: int()
      .positive()
      .default(5 * MB)
      .describe('largest artifact version (decoded bytes); larger is `413 payload_too_large`'),
    APP_SESSION_TTL_SECONDS: int()
      .min(60)
      .max(86400)
      .default(3600)
      .describe('how long an app link (and the bridge token in the page) stays valid'),
    APP_FRAME_ANCESTORS: z
      .string()
      .regex(/^[A-Za-z0-9*'.:/ -]+$/, 'APP_FRAME_ANCESTORS must be CSP source expressions')
      .default("'self'")
      .describe('CSP `frame-ancestors` of app pages: who may frame them (space-separated CSP sources)'),
  },
  Chains: {
    CHAIN_FANOUT_BATCH: int()
      .positive()
      .max(1000)
      .default(250)
      .describe(
        "elements of a fan-out step per child workflow (keeps each history far below Temporal's limits)",
      ),
    CHAIN_FANOUT_CONCURRENCY: int()
      .positive()
      .max(100)
      .default(8)
      .describe('elements of one fan-out step running at once'),
    CHAIN_FANOUT_MAX: int()
      .positive()
      .max(100_000)
      .default(1000)
      .describe(
        'the most elements one fan-out step runs over: `400 fanout_too_large` at `POST …/run` when the input holds the array, else the step fails before any element runs',
      ),
    CHAIN_SCHEMA_MAX_NODES: int()
      .positive()
      .max(100_000)
      .default(2000)
      .describe(
        'objects and arrays the step schemas of one request may hold together (`400` beyond; each is compiled)',
      ),
    CHAIN_STATE_MAX_BYTES: int()
      .positive()
      .max(15 * MB)
      .default(8 * MB)
      .describe(
        "the most a chain run's state or one fan-out element's output may hold (below the database's 16 MB per document); the step that would pass it fails",
      ),
  },
  Webhooks: {
    WEBHOOK_BODY_LIMIT: z
      .string()
      .default('256kb')
      .describe(
        "largest webhook delivery body (`413` beyond; it is kept in the delivery's workflow history)",
      ),
    WEBHOOK_RATE_LIMIT_PER_MINUTE: int()
      .positive()
      .default(600)
      .describe(
        'accepted deliveries per webhook and minute unless the webhook sets `rateLimitPerMinute` (`429` beyond)',
      ),
    WEBHOOK_SIGNATURE_TOLERANCE_SECONDS: int()
      .positive()
      .max(3600)
      .default(300)
      .describe('replay window of signed deliveries: how far `webhook-timestamp` may be from now'),
  },
  'Budgets of what tenants write': {
    TEMPLATE_MAX_CHARS: int()
      .positive()
      .default(50_000)
      .describe(
        'longest Handlebars template saved (step instructions, a webhook mapping value; `400` beyond)',
      ),
    TEMPLATE_MAX_BLOCK_DEPTH: int()
      .positive()
      .max(100)
      .default(8)
      .describe(
        'how deep block helpers (`{{#each}}`, `{{#with}}`, `{{#if}}`…) may nest in a saved template (`400` beyond)',
      ),
    TEMPLATE_MAX_OUTPUT_CHARS: int()
      .positive()
      .default(1_000_000)
      .describe('text one rendering may produce (the step, delivery or handler execution fails beyond)'),
    TEMPLATE_MAX_ITERATIONS: int()
      .positive()
      .default(100_000)
      .describe('block bodies one rendering may run, every `#each` element counting one (fails beyond)'),
    TEMPLATE_TIMEOUT_MS: int()
      .positive()
      .max(60_000)
      .default(1_000)
      .describe('longest one rendering may take (fails beyond)'),
    EXPRESSION_MAX_CHARS: int()
      .positive()
      .max(100_000)
      .default(1_000)
      .describe('longest Jexl guard or `forEachElement` JSONPath saved (`400` beyond)'),
    EXPRESSION_MAX_STEPS: int()
      .positive()
      .default(200_000)
      .describe(
        'evaluation steps of one guard or path evaluation (nodes evaluated or visited; the step fails beyond)',
      ),
    EXPRESSION_TIMEOUT_MS: int()
      .positive()
      .max(60_000)
      .default(1_000)
      .describe('longest one guard or path evaluation may take (the step fails beyond)'),
    PATTERN_MAX_CHARS: int()
      .positive()
      .max(500)
      .default(100)
      .describe("longest glob pattern (a search's `filePattern`; `400 invalid_pattern` beyond)"),
    PATTERN_MAX_WILDCARDS: int()
      .positive()
      .max(100)
      .default(20)
      .describe('wildcards (`*`, `?`, `[…]`) one glob pattern may hold (`400 invalid_pattern` beyond)'),
  },
  'Browser sessions': {
    BROWSER_SESSIONS_MAX_PER_ORG: int()
      .positive()
      .max(1000)
      .default(3)
      .describe(
        'browser sessions one organization may have active at once (`429 browser_session_limit` beyond)',
      ),
    BROWSER_SESSION_IDLE_TIMEOUT_SECONDS: int()
      .min(10)
      .max(86400)
      .default(300)
      .describe('a browser session without an action this long expires and its Chromium ends'),
    CHROMIUM_PATH: z
      .string()
      .min(1)
      .default('/usr/bin/chromium')
      .describe(
        'the Chromium workers launch for browser sessions (the Debian `chromium` package; never downloaded)',
      ),
    CHROMIUM_NO_SANDBOX: bool.describe(
      'run Chromium without its own sandbox (a container running as root needs it); default: only when running as root',
    ),
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

/** Defaults docs/configuration.md gives in words: those that depend on the machine. */
export const defaultsInWords: Record<string, string> = {
  LOCAL_LLM_THREADS: 'CPU cores − 1, from 1 to 4',
};

export const variables = z.object({
  ...sections['Service and logging'],
  ...sections['Database, Temporal and workers'],
  ...sections['Deadlines on every dependency'],
  ...sections['Object storage'],
  ...sections['Knowledge bases'],
  ...sections['Realtime and mail'],
  ...sections['Identity'],
  ...sections['Models and credits'],
  ...sections['Admission and turns'],
  ...sections['Tables, artifacts and apps'],
  ...sections['Chains'],
  ...sections['Webhooks'],
  ...sections['Budgets of what tenants write'],
  ...sections['Browser sessions'],
  ...sections['Observability'],
});
