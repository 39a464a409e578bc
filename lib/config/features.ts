import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { DEFAULT_PARSE_LIMITS as PARSE } from '../knowledge-bases/parsing/limits';
import { DEFAULT_CACHE_SETTINGS as LANCE_CACHES } from '../vectors/lancedb-caches';
import { bool, int, MB } from './kinds';

/** What the features do, and the budgets and bounds of tenants' work. */
export const features = {
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
    VECTOR_INDEX_CACHE_MB: int()
      .min(1)
      .default(LANCE_CACHES.indexCacheMb)
      .describe("LanceDB: index data each process keeps in memory, in MB (LanceDB's own default is 6 GB)"),
    VECTOR_METADATA_CACHE_MB: int()
      .min(1)
      .default(LANCE_CACHES.metadataCacheMb)
      .describe(
        "LanceDB: table metadata (manifests, file footers) each process keeps in memory, in MB (LanceDB's own default is 1 GB)",
      ),
    PINECONE_API_KEY: z.string().optional().describe('the Pinecone key, a secret'),
    PINECONE_INDEXES: z
      .string()
      .optional()
      .describe(
        'JSON map from embedding model id to its Pinecone index: `{"openai:text-embedding-3-small":{"name":"kb-small","host":"<optional>"}}`',
      ),
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
} satisfies Record<string, Record<string, z.ZodTypeAny>>;
