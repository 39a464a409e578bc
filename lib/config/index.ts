import type { z } from 'zod';
import type { VectorStoreSettings } from '../vectors/create-vector-store';
import { variables as schema } from './variables';

export type Config = ReturnType<typeof loadConfig>;

/** The vector store: LanceDB in VECTOR_DIR, or Pinecone with an index per embedding model. */
function vectorSettings(c: z.infer<typeof schema>): VectorStoreSettings {
  if (c.VECTOR_STORE === 'lancedb')
    return {
      kind: 'lancedb',
      dir: c.VECTOR_DIR,
      caches: { indexCacheMb: c.VECTOR_INDEX_CACHE_MB, metadataCacheMb: c.VECTOR_METADATA_CACHE_MB },
    };
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
      maxCachedWorkflows: c.WORKER_MAX_CACHED_WORKFLOWS,
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
