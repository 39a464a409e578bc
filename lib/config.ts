import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { DEFAULT_PARSE_LIMITS as PARSE } from './knowledge-bases/parsing/limits';
import type { VectorStoreSettings } from './vectors/create-vector-store';

const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1')
  .optional();

/** An empty value (`VAR=` in a compose file) means unset. */
const unsetIfEmpty = <T extends z.ZodTypeAny>(t: T) => z.preprocess((v) => (v === '' ? undefined : v), t);

// Every setting of the service, read from the environment once and validated here.
const schema = z.object({
  NODE_ENV: z.string().default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: z.string().url().default('http://127.0.0.1:3000'),

  MONGODB_URI: z.string().min(1).default('mongodb://127.0.0.1:27017/agent_workspace'),

  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('agent-workspace'),
  TEMPORAL_UI_URL: z.string().url().optional(),
  WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().positive().default(50),
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().positive().default(40),

  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().min(1).default('agent-workspace'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool,
  /** Where clients reach S3 (signed upload and download URLs), when it differs from S3_ENDPOINT. */
  S3_PUBLIC_ENDPOINT: z.string().url().optional(),

  /** The largest file a knowledge base accepts (bytes; larger uploads are deleted and end in ERROR). */
  KB_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(100 * 1024 * 1024),
  // The budget of one file's parse (issue 32; lib/knowledge-bases/parsing/limits.ts says what each bounds).
  /** Time a parse may work, not counting waits for the vision model (ms); the parse process is killed then. At
   * most 20 minutes: the parse activity's own start-to-close timeout (30 minutes) must stay the larger. */
  KB_PARSE_TIMEOUT_MS: z.coerce.number().int().positive().max(1_200_000).default(PARSE.timeoutMs),
  /** V8 heap of the process a file is parsed in (MB); a parse that needs more ends, the worker does not. */
  KB_PARSE_MAX_HEAP_MB: z.coerce.number().int().min(32).default(PARSE.maxHeapMb),
  /** Files parsed at once by one worker process (each in its own process, up to KB_PARSE_MAX_HEAP_MB). */
  KB_PARSE_CONCURRENCY: z.coerce.number().int().positive().max(64).default(2),
  /** Characters of text one file may yield. */
  KB_PARSE_MAX_TEXT_CHARS: z.coerce.number().int().positive().default(PARSE.maxTextChars),
  KB_PDF_MAX_PAGES: z.coerce.number().int().positive().default(PARSE.maxPdfPages),
  /** Nesting of elements in an XML file. */
  KB_XML_MAX_DEPTH: z.coerce.number().int().positive().max(1000).default(PARSE.maxXmlDepth),
  /** Entries, total declared uncompressed bytes and per-entry compression ratio of a zip container (DOCX). */
  KB_ZIP_MAX_ENTRIES: z.coerce.number().int().positive().default(PARSE.maxZipEntries),
  KB_ZIP_MAX_UNCOMPRESSED_BYTES: z.coerce.number().int().positive().default(PARSE.maxZipBytes),
  KB_ZIP_MAX_RATIO: z.coerce.number().positive().default(PARSE.maxZipRatio),
  /** The vision-capable model that reads images (and PDF pages with parseStrategy llm-vision). */
  VISION_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /** `local`: the in-process sentence-embedding model (the offline default); `openai`: the embeddings API. */
  EMBEDDINGS_PROVIDER: z.enum(['local', 'openai']).default('local'),
  /** The OpenAI-compatible embedding model (EMBEDDINGS_PROVIDER=openai). */
  EMBEDDING_MODEL: z.string().min(1).default('text-embedding-3-small'),
  /** The folder of the local embedding model (provisioned by the stack). */
  LOCAL_EMBEDDING_MODEL_DIR: z.string().optional(),
  /** `lancedb`: the embedded vector store on local disk (VECTOR_DIR); `pinecone`: Pinecone. */
  VECTOR_STORE: z.enum(['lancedb', 'pinecone']).default('lancedb'),
  VECTOR_DIR: z.string().min(1).default('.data/vectors'),
  PINECONE_API_KEY: z.string().optional(),
  /** JSON map from embedding model id to its Pinecone index: {"openai:text-embedding-3-small":{"name":"kb-small"}} */
  PINECONE_INDEXES: z.string().optional(),

  REDIS_URL: z.string().min(1).default('redis://127.0.0.1:6379'),

  // Deadlines on every dependency (README "When a dependency is down"): a server that stops answering (a network
  // partition, a frozen process, a stuck disk) fails a call after this long instead of holding it for good.
  /** A Temporal call (starts, signals, visibility, schedules; not the long polls that wait for a result). */
  TEMPORAL_RPC_TIMEOUT_MS: z.coerce.number().int().min(1000).default(10_000),
  /** A database socket with nothing to read this long fails its operation (above TABLE_QUERY_TIMEOUT_MS). */
  DB_SOCKET_TIMEOUT_MS: z.coerce.number().int().min(1000).default(15_000),
  /** A Redis command (Redis is an optimization: what it answers not in time is done without it). Well above an
   * event loop's pauses: a timer due with the reply fires first and fails a command that was answered. */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).default(5000),
  /** An object-store request: this long without a byte either way fails an attempt (the SDK makes three). */
  S3_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(10_000),
  /** Connecting to the mail relay, its greeting, and then this long without a byte either way. */
  SMTP_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),

  SMTP_URL: z.string().min(1).default('smtp://127.0.0.1:2525'),
  MAIL_FROM: z.string().min(3).default('Agent Workspace <no-reply@agent-workspace.local>'),
  /** The inbound SMTP listener for agents' addresses: the API process listens on this port when it is set. */
  INBOUND_SMTP_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  INBOUND_SMTP_HOST: z.string().min(1).default('127.0.0.1'),
  /** The largest inbound message accepted (bytes; SIZE is advertised, larger ones are refused with 552). */
  INBOUND_EMAIL_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024),
  /** PEM files for STARTTLS on the listener (both or neither). */
  INBOUND_SMTP_TLS_KEY_FILE: z.string().optional(),
  INBOUND_SMTP_TLS_CERT_FILE: z.string().optional(),
  /**
   * The mail domains agents' addresses may use (comma-separated). Unset: no agent may have an address, so an
   * agent can never take a person's address or send as a domain the operator does not run.
   */
  AGENT_EMAIL_DOMAINS: z.string().default(''),
  /**
   * The authserv-ids of the mail relays whose `Authentication-Results` header this service trusts
   * (comma-separated). Set: inbound mail acts as a member only with `dmarc=pass` for its From domain from one
   * of them. Unset: only when the SMTP envelope sender equals the From address.
   */
  INBOUND_TRUSTED_RELAYS: z.string().default(''),

  JWT_SECRET: z.string().min(32, 'JWT_SECRET must be at least 32 characters'),
  JWT_ISSUER: z.string().default('agent-workspace'),
  SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(12 * 3600),
  /**
   * How long an API key's record and a membership read to authenticate a request may be reused (ms; 0: read on
   * every request). A write drops them at once in its own process and in the others through Redis pub/sub; this
   * bounds a change that was never announced.
   */
  CREDENTIAL_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(10_000),
  OIDC_ISSUER: z.string().url().optional(),
  OIDC_JWKS_URL: z.string().url().optional(),
  OIDC_AUDIENCE: z.string().optional(),

  /**
   * `openai`: the OpenAI-compatible server at OPENAI_BASE_URL; `local`: the in-process local model
   * (LOCAL_LLM_MODEL_PATH). Unset: `openai` when OPENAI_API_KEY is set, otherwise `local`.
   */
  LLM_PROVIDER: z.enum(['openai', 'local']).optional(),
  OPENAI_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  OPENAI_API_KEY: z.string().default(''),
  /** The GGUF file of the local chat model (provisioned by the stack). */
  LOCAL_LLM_MODEL_PATH: z.string().optional(),
  /** CPU threads of the local model; llama.cpp's threads spin, so more threads than free cores is slower. */
  LOCAL_LLM_THREADS: z.coerce
    .number()
    .int()
    .positive()
    .max(64)
    .default(Math.max(1, Math.min(4, availableParallelism() - 1))),
  /** Tokens of prompt and answer one local call may hold (older messages are left out to fit). */
  LOCAL_LLM_CONTEXT_SIZE: z.coerce.number().int().min(512).max(32768).default(4096),
  /** Answer tokens of one local call unless the request asks for fewer. */
  LOCAL_LLM_MAX_TOKENS: z.coerce.number().int().positive().max(8192).default(512),
  /** Local calls that run at once (each its own context sequence); the rest wait in a queue. */
  LOCAL_LLM_CONCURRENCY: z.coerce.number().int().positive().max(16).default(1),
  /** The model that writes a chain step from a prompt (POST /orgs/{org}/chains/from-prompt). */
  CHAIN_GENERATION_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /** The longest one generation call may take before the request answers 502 model_error. */
  CHAIN_GENERATION_TIMEOUT_MS: z.coerce.number().int().positive().max(600_000).default(60_000),

  // Credits: whole numbers. A model call costs ceil((prompt tokens × CREDITS_PER_1K_PROMPT_TOKENS + completion
  // tokens × CREDITS_PER_1K_COMPLETION_TOKENS) / 1000); an organization starts with CREDITS_STARTING_BALANCE.
  CREDITS_STARTING_BALANCE: z.coerce.number().int().min(0).max(1_000_000_000).default(10_000),
  CREDITS_PER_1K_PROMPT_TOKENS: z.coerce.number().int().min(0).max(1_000_000).default(10),
  CREDITS_PER_1K_COMPLETION_TOKENS: z.coerce.number().int().min(0).max(1_000_000).default(40),
  /** Allow callbackUrl and outbound tool requests to private, loopback and link-local addresses. */
  ALLOW_PRIVATE_OUTBOUND: bool,

  VALIDATE_RESPONSES: bool,
  JSON_BODY_LIMIT: z.string().default('1mb'),
  TABLE_QUERY_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  /** Stored row data one page of rows may hold (400 page_too_large beyond: ask for fewer rows). */
  TABLE_PAGE_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
  /** The largest content one artifact version may have (bytes). */
  ARTIFACT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(5 * 1024 * 1024),
  /** How long an app link (and the bridge token inside the page) stays valid. */
  APP_SESSION_TTL_SECONDS: z.coerce.number().int().min(60).max(86400).default(3600),
  /** CSP frame-ancestors of a served app: who may embed it in a frame (space-separated CSP sources). */
  APP_FRAME_ANCESTORS: z
    .string()
    .regex(/^[A-Za-z0-9*'.:/ -]+$/, 'APP_FRAME_ANCESTORS must be CSP source expressions')
    .default("'self'"),
  /** Chat turns one organization may have running (the `turns` kind of admission below). */
  MAX_CONCURRENT_TURNS_PER_ORG: z.coerce.number().int().positive().default(20),
  // Admission (README "Admission"): each organization's unfinished background work of each kind; past it, intake
  // answers 429 and a schedule fire is recorded as skipped. Operators override them per organization
  // (`cli admission set`).
  ADMISSION_MAX_WEBHOOK_DELIVERIES: z.coerce.number().int().positive().default(200),
  ADMISSION_MAX_CHAIN_RUNS: z.coerce.number().int().positive().default(200),
  ADMISSION_MAX_INGESTIONS: z.coerce.number().int().positive().default(50),
  ADMISSION_MAX_SCHEDULE_FIRES: z.coerce.number().int().positive().default(50),
  ADMISSION_MAX_ANALYSES: z.coerce.number().int().positive().default(20),
  /** The Retry-After (seconds) of a 429 for a full backlog. */
  ADMISSION_RETRY_AFTER_SECONDS: z.coerce.number().int().positive().max(3600).default(5),
  /** How often a worker frees the slots of executions that ended unreported (ms). */
  ADMISSION_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  /** While a chat turn runs in a worker process, its background workers hold at most this many slots of each
   * kind (instead of WORKER_MAX_CONCURRENT_*): turns first (README "Admission"). */
  WORKER_BACKGROUND_SLOTS_WHILE_INTERACTIVE: z.coerce.number().int().positive().default(2),
  /** The interactive queue's own worker slots (chat turns), apart from WORKER_MAX_CONCURRENT_*. */
  WORKER_INTERACTIVE_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().positive().default(50),
  WORKER_INTERACTIVE_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().positive().default(20),

  /** The operator's bearer token for GET /metrics (API and worker); unset, /metrics answers 404. A secret. */
  METRICS_TOKEN: unsetIfEmpty(z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional()),
  /** The worker serves GET /metrics on this port when set (needs METRICS_TOKEN). */
  WORKER_METRICS_PORT: unsetIfEmpty(z.coerce.number().int().min(0).max(65535).optional()),
  /** Traces are exported over OTLP/HTTP to this collector when set; unset, tracing is off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: unsetIfEmpty(z.string().url().optional()),
  /** service.name of the exported spans (default: agent-workspace-api / agent-workspace-worker). */
  OTEL_SERVICE_NAME: unsetIfEmpty(z.string().min(1).optional()),

  /** The model chain steps answer with. */
  CHAIN_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /** Elements of a fan-out step per child workflow (keeps each history far below Temporal's limits). */
  CHAIN_FANOUT_BATCH: z.coerce.number().int().positive().max(1000).default(250),
  /** Elements of one fan-out step that run at the same time. */
  CHAIN_FANOUT_CONCURRENCY: z.coerce.number().int().positive().max(100).default(8),
  /** The most elements one fan-out step runs over: a longer array is a 400 at POST …/run when the input holds it,
   * else the step (and the run) fails before any element runs. */
  CHAIN_FANOUT_MAX: z.coerce.number().int().positive().max(100_000).default(1000),
  /** Objects and arrays the step schemas of one request may hold together (each is compiled into code). */
  CHAIN_SCHEMA_MAX_NODES: z.coerce.number().int().positive().max(100_000).default(2000),
  /** The most a chain run's state (its JSON) or one fan-out element's output may hold: the step that would make it
   * larger fails. Below the database's 16 MB per document. */
  CHAIN_STATE_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(15 * 1024 * 1024)
    .default(8 * 1024 * 1024),

  /** The largest webhook delivery body (413 beyond; it is kept in the delivery's workflow history). */
  WEBHOOK_BODY_LIMIT: z.string().default('256kb'),
  /** Accepted deliveries per webhook and minute, unless the webhook sets its own rateLimitPerMinute. */
  WEBHOOK_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(600),
  /** How far a signed delivery's webhook-timestamp may be from now (the replay window). */
  WEBHOOK_SIGNATURE_TOLERANCE_SECONDS: z.coerce.number().int().positive().max(3600).default(300),

  // Budgets of what tenants write (lib/expressions/limits.ts): templates, guards, paths and glob patterns.
  /** The longest Handlebars template saved (step instructions, a webhook mapping value; 400 beyond). */
  TEMPLATE_MAX_CHARS: z.coerce.number().int().positive().default(50_000),
  /** How deep block helpers ({{#each}}, {{#with}}, {{#if}}…) may nest in a saved template (400 beyond). */
  TEMPLATE_MAX_BLOCK_DEPTH: z.coerce.number().int().positive().max(100).default(8),
  /** The most text one rendering may produce (the step, delivery or handler fails beyond). */
  TEMPLATE_MAX_OUTPUT_CHARS: z.coerce.number().int().positive().default(1_000_000),
  /** Block bodies one rendering may run, every #each element counting one (fails beyond). */
  TEMPLATE_MAX_ITERATIONS: z.coerce.number().int().positive().default(100_000),
  /** The longest one rendering may take (fails beyond). */
  TEMPLATE_TIMEOUT_MS: z.coerce.number().int().positive().max(60_000).default(1_000),
  /** The longest Jexl guard or forEachElement JSONPath saved (400 beyond). */
  EXPRESSION_MAX_CHARS: z.coerce.number().int().positive().max(100_000).default(1_000),
  /** Evaluation steps of one guard or path evaluation (nodes evaluated or visited; the step fails beyond). */
  EXPRESSION_MAX_STEPS: z.coerce.number().int().positive().default(200_000),
  /** The longest one guard or path evaluation may take (the step fails beyond). */
  EXPRESSION_TIMEOUT_MS: z.coerce.number().int().positive().max(60_000).default(1_000),
  /** The longest glob pattern (a search's filePattern; 400 invalid_pattern beyond). */
  PATTERN_MAX_CHARS: z.coerce.number().int().positive().max(500).default(100),
  /** Wildcards (*, ?, […]) one glob pattern may hold (400 invalid_pattern beyond). */
  PATTERN_MAX_WILDCARDS: z.coerce.number().int().positive().max(100).default(20),

  /** Browser sessions one organization may have active at once (POST answers 429 beyond). */
  BROWSER_SESSIONS_MAX_PER_ORG: z.coerce.number().int().positive().max(1000).default(3),
  /** A browser session without an action for this long expires and its Chromium ends. */
  BROWSER_SESSION_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().min(10).max(86400).default(300),
  /** The Chromium a worker launches for browser sessions (the Debian `chromium` package; never downloaded). */
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  /** Run Chromium without its own sandbox (needed as root in a container); default: only when running as root. */
  CHROMIUM_NO_SANDBOX: bool,
});

export type Config = ReturnType<typeof loadConfig>;

/** The vector store: LanceDB in VECTOR_DIR, or Pinecone with an index per embedding model. */
function vectorSettings(c: z.infer<typeof schema>): VectorStoreSettings {
  if (c.VECTOR_STORE === 'lancedb') return { kind: 'lancedb', dir: c.VECTOR_DIR };
  if (!c.PINECONE_API_KEY || !c.PINECONE_INDEXES)
    throw new Error(
      'invalid configuration: VECTOR_STORE=pinecone needs PINECONE_API_KEY and PINECONE_INDEXES',
    );
  let indexes: unknown;
  try {
    indexes = JSON.parse(c.PINECONE_INDEXES);
  } catch {
    indexes = null;
  }
  const valid =
    indexes !== null &&
    typeof indexes === 'object' &&
    Object.values(indexes).every((i) => typeof (i as { name?: unknown }).name === 'string');
  if (!valid)
    throw new Error(
      'invalid configuration: PINECONE_INDEXES must be JSON like {"<model id>":{"name":"<index>"}}',
    );
  return {
    kind: 'pinecone',
    apiKey: c.PINECONE_API_KEY,
    indexes: indexes as Record<string, { name: string; host?: string }>,
  };
}

/** `a.example, B.example ,` → ['a.example', 'b.example']. */
const lowerList = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

/** A host name as mail domains and authserv-ids spell it (letters, digits, hyphens, dots). */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

function hostList(name: string, value: string): string[] {
  const items = lowerList(value);
  for (const item of items)
    if (!HOST_NAME.test(item))
      throw new Error(`invalid configuration: ${name}: '${item}' is not a host name`);
  return items;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  const c = parsed.data;
  if (c.DB_SOCKET_TIMEOUT_MS <= c.TABLE_QUERY_TIMEOUT_MS) {
    throw new Error(
      'invalid configuration: DB_SOCKET_TIMEOUT_MS must be longer than TABLE_QUERY_TIMEOUT_MS (a slow row query ' +
        'would fail as an unreachable database instead of a 400 query_timeout)',
    );
  }
  if (Boolean(c.INBOUND_SMTP_TLS_KEY_FILE) !== Boolean(c.INBOUND_SMTP_TLS_CERT_FILE)) {
    throw new Error(
      'invalid configuration: INBOUND_SMTP_TLS_KEY_FILE and INBOUND_SMTP_TLS_CERT_FILE go together',
    );
  }
  if (c.OIDC_ISSUER && !c.OIDC_AUDIENCE) {
    // Without an audience, a token the issuer minted for any other application would sign in here.
    throw new Error('invalid configuration: OIDC_AUDIENCE is required when OIDC_ISSUER is set');
  }
  if (c.WORKER_METRICS_PORT !== undefined && !c.METRICS_TOKEN) {
    throw new Error('invalid configuration: WORKER_METRICS_PORT needs METRICS_TOKEN');
  }
  return {
    env: c.NODE_ENV,
    logLevel: c.LOG_LEVEL,
    port: c.PORT,
    publicBaseUrl: c.PUBLIC_BASE_URL.replace(/\/$/, ''),
    mongodbUri: c.MONGODB_URI,
    temporal: {
      address: c.TEMPORAL_ADDRESS,
      namespace: c.TEMPORAL_NAMESPACE,
      taskQueue: c.TEMPORAL_TASK_QUEUE,
      uiUrl: c.TEMPORAL_UI_URL,
      rpcTimeoutMs: c.TEMPORAL_RPC_TIMEOUT_MS,
      maxConcurrentActivities: c.WORKER_MAX_CONCURRENT_ACTIVITIES,
      maxConcurrentWorkflowTasks: c.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
      backgroundSlotsWhileInteractive: c.WORKER_BACKGROUND_SLOTS_WHILE_INTERACTIVE,
      interactive: {
        maxConcurrentActivities: c.WORKER_INTERACTIVE_MAX_CONCURRENT_ACTIVITIES,
        maxConcurrentWorkflowTasks: c.WORKER_INTERACTIVE_MAX_CONCURRENT_WORKFLOW_TASKS,
      },
    },
    admission: {
      limits: {
        webhook_deliveries: c.ADMISSION_MAX_WEBHOOK_DELIVERIES,
        chain_runs: c.ADMISSION_MAX_CHAIN_RUNS,
        ingestions: c.ADMISSION_MAX_INGESTIONS,
        schedule_fires: c.ADMISSION_MAX_SCHEDULE_FIRES,
        analyses: c.ADMISSION_MAX_ANALYSES,
        turns: c.MAX_CONCURRENT_TURNS_PER_ORG,
      },
      retryAfterSeconds: c.ADMISSION_RETRY_AFTER_SECONDS,
      reconcileIntervalMs: c.ADMISSION_RECONCILE_INTERVAL_MS,
    },
    s3: {
      endpoint: c.S3_ENDPOINT,
      region: c.S3_REGION,
      bucket: c.S3_BUCKET,
      accessKeyId: c.S3_ACCESS_KEY_ID,
      secretAccessKey: c.S3_SECRET_ACCESS_KEY,
      forcePathStyle: c.S3_FORCE_PATH_STYLE ?? Boolean(c.S3_ENDPOINT),
      publicEndpoint: c.S3_PUBLIC_ENDPOINT,
      requestTimeoutMs: c.S3_REQUEST_TIMEOUT_MS,
    },
    kb: {
      maxFileBytes: c.KB_MAX_FILE_BYTES,
      visionModel: c.VISION_MODEL,
      parseConcurrency: c.KB_PARSE_CONCURRENCY,
      parse: {
        timeoutMs: c.KB_PARSE_TIMEOUT_MS,
        maxHeapMb: c.KB_PARSE_MAX_HEAP_MB,
        maxTextChars: c.KB_PARSE_MAX_TEXT_CHARS,
        maxPdfPages: c.KB_PDF_MAX_PAGES,
        maxXmlDepth: c.KB_XML_MAX_DEPTH,
        maxZipEntries: c.KB_ZIP_MAX_ENTRIES,
        maxZipBytes: c.KB_ZIP_MAX_UNCOMPRESSED_BYTES,
        maxZipRatio: c.KB_ZIP_MAX_RATIO,
      },
    },
    embeddings: {
      provider: c.EMBEDDINGS_PROVIDER,
      model: c.EMBEDDING_MODEL,
      localModelDir: c.LOCAL_EMBEDDING_MODEL_DIR,
    },
    vectors: vectorSettings(c),
    redisUrl: c.REDIS_URL,
    redisCommandTimeoutMs: c.REDIS_COMMAND_TIMEOUT_MS,
    dbSocketTimeoutMs: c.DB_SOCKET_TIMEOUT_MS,
    mail: { smtpUrl: c.SMTP_URL, from: c.MAIL_FROM, timeoutMs: c.SMTP_TIMEOUT_MS },
    agentEmailDomains: hostList('AGENT_EMAIL_DOMAINS', c.AGENT_EMAIL_DOMAINS),
    inboundEmail: {
      trustedRelays: hostList('INBOUND_TRUSTED_RELAYS', c.INBOUND_TRUSTED_RELAYS),
      port: c.INBOUND_SMTP_PORT,
      host: c.INBOUND_SMTP_HOST,
      maxBytes: c.INBOUND_EMAIL_MAX_BYTES,
      tls: c.INBOUND_SMTP_TLS_KEY_FILE
        ? { keyFile: c.INBOUND_SMTP_TLS_KEY_FILE, certFile: c.INBOUND_SMTP_TLS_CERT_FILE! }
        : undefined,
    },
    auth: {
      jwtSecret: c.JWT_SECRET,
      issuer: c.JWT_ISSUER,
      sessionTtlSeconds: c.SESSION_TTL_SECONDS,
      credentialCacheTtlMs: c.CREDENTIAL_CACHE_TTL_MS,
      oidc: c.OIDC_ISSUER
        ? { issuer: c.OIDC_ISSUER, jwksUrl: c.OIDC_JWKS_URL, audience: c.OIDC_AUDIENCE! }
        : undefined,
    },
    llm: {
      provider: c.LLM_PROVIDER ?? (c.OPENAI_API_KEY ? ('openai' as const) : ('local' as const)),
      baseUrl: c.OPENAI_BASE_URL,
      apiKey: c.OPENAI_API_KEY,
      local: {
        modelPath: c.LOCAL_LLM_MODEL_PATH,
        threads: c.LOCAL_LLM_THREADS,
        contextSize: c.LOCAL_LLM_CONTEXT_SIZE,
        maxTokens: c.LOCAL_LLM_MAX_TOKENS,
        concurrency: c.LOCAL_LLM_CONCURRENCY,
      },
    },
    chainGeneration: { model: c.CHAIN_GENERATION_MODEL, timeoutMs: c.CHAIN_GENERATION_TIMEOUT_MS },
    credits: {
      startingBalance: c.CREDITS_STARTING_BALANCE,
      perThousandPromptTokens: c.CREDITS_PER_1K_PROMPT_TOKENS,
      perThousandCompletionTokens: c.CREDITS_PER_1K_COMPLETION_TOKENS,
    },
    allowPrivateOutbound: c.ALLOW_PRIVATE_OUTBOUND ?? false,
    validateResponses: c.VALIDATE_RESPONSES ?? false,
    jsonBodyLimit: c.JSON_BODY_LIMIT,
    tableQueryTimeoutMs: c.TABLE_QUERY_TIMEOUT_MS,
    tablePageMaxBytes: c.TABLE_PAGE_MAX_BYTES,
    chains: {
      model: c.CHAIN_MODEL,
      fanOutBatch: c.CHAIN_FANOUT_BATCH,
      fanOutConcurrency: c.CHAIN_FANOUT_CONCURRENCY,
      fanOutMax: c.CHAIN_FANOUT_MAX,
      stateMaxBytes: c.CHAIN_STATE_MAX_BYTES,
      schemaMaxNodes: c.CHAIN_SCHEMA_MAX_NODES,
    },
    artifacts: {
      maxBytes: c.ARTIFACT_MAX_BYTES,
      appSessionTtlSeconds: c.APP_SESSION_TTL_SECONDS,
      appFrameAncestors: c.APP_FRAME_ANCESTORS,
    },
    expressions: {
      templateMaxChars: c.TEMPLATE_MAX_CHARS,
      templateMaxBlockDepth: c.TEMPLATE_MAX_BLOCK_DEPTH,
      templateMaxOutputChars: c.TEMPLATE_MAX_OUTPUT_CHARS,
      templateMaxIterations: c.TEMPLATE_MAX_ITERATIONS,
      templateTimeoutMs: c.TEMPLATE_TIMEOUT_MS,
      expressionMaxChars: c.EXPRESSION_MAX_CHARS,
      expressionMaxSteps: c.EXPRESSION_MAX_STEPS,
      expressionTimeoutMs: c.EXPRESSION_TIMEOUT_MS,
      patternMaxChars: c.PATTERN_MAX_CHARS,
      patternMaxWildcards: c.PATTERN_MAX_WILDCARDS,
    },
    browser: {
      maxPerOrg: c.BROWSER_SESSIONS_MAX_PER_ORG,
      idleTimeoutSeconds: c.BROWSER_SESSION_IDLE_TIMEOUT_SECONDS,
      chromiumPath: c.CHROMIUM_PATH,
      noSandbox: c.CHROMIUM_NO_SANDBOX ?? process.getuid?.() === 0,
    },
    observability: {
      metricsToken: c.METRICS_TOKEN,
      workerMetricsPort: c.WORKER_METRICS_PORT,
      otlpEndpoint: c.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: c.OTEL_SERVICE_NAME,
    },
    webhooks: {
      bodyLimit: c.WEBHOOK_BODY_LIMIT,
      ratePerMinute: c.WEBHOOK_RATE_LIMIT_PER_MINUTE,
      signatureToleranceSeconds: c.WEBHOOK_SIGNATURE_TOLERANCE_SECONDS,
    },
  };
}
