import { Worker } from 'node:worker_threads';
import { LimitExceeded, limitExceeded, type ParseLimits } from './limits';
import type { FromThread, ToThread } from './sandbox-protocol';
import { ParseError, type ParsedDocument, type ParseInput, type VisionReader } from './types';

/**
 * Parses files off the worker's heap (issue 32: a 119 KB DOCX grew the worker to 4.7 GB and V8 aborted it,
 * taking every other activity of the process with it).
 *
 * Design:
 * - Each file is parsed in a fresh worker thread (sandbox-thread.ts) with V8 `resourceLimits`: a parse that
 *   needs more than KB_PARSE_MAX_HEAP_MB ends that thread with ERR_WORKER_OUT_OF_MEMORY, never the process.
 *   A thread per file costs a thread start and the parsers' module loading (tens of ms from dist/); it also
 *   means no heap a hostile file filled is reused for the next one. KB_PARSE_CONCURRENCY threads run at once
 *   per process, so the worst case is that many times the heap limit.
 * - A wall-clock limit (KB_PARSE_TIMEOUT_MS) terminates the thread, which also stops a parser stuck in a
 *   synchronous loop (the old per-step timers in pdf.ts only fired when pdf.js yielded).
 * - Vision-model calls (images, scanned PDF pages) stay in this thread, where the LLM client, its credentials
 *   and the outbound guard live: the parse thread posts the image over its message port and waits for the text.
 *   Time spent waiting for the model does not count against KB_PARSE_TIMEOUT_MS (a long scan is legitimately
 *   slow there); the model calls have their own client timeouts and the activity's.
 * - What the heap limit does not see (ArrayBuffers inflated by zlib, canvas pixels) is bounded where it is made:
 *   zip-guard.ts before anything inflates, pdf-render.ts's page size.
 * The thread's code is evaluated from a string, as lib/embeddings/onnx-thread.ts does, so the same code runs
 * under tsx (tests register tsx in the thread) and from dist/ (plain require of the compiled entry).
 */
const THREAD_SOURCE = `
const { workerData } = require('node:worker_threads');
if (workerData.tsx) require(workerData.tsx).register();
require(workerData.entry);
`;

/** tsx's CommonJS hook when this file runs as TypeScript (tests, `node --import tsx`); nothing from dist/. */
const TSX = __filename.endsWith('.ts') ? require.resolve('tsx/cjs/api') : undefined;
const THREAD_ENTRY = require.resolve('./sandbox-thread');

export class ParseSandbox {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    readonly limits: ParseLimits,
    private readonly concurrency = 2,
  ) {}

  /** Parses waiting for a free thread. */
  get waiting(): number {
    return this.queue.length;
  }

  /** parseDocument in a thread of its own, under `limits`; throws what parseDocument would (ParseError…). */
  async parse(input: Omit<ParseInput, 'limits'>, signal?: AbortSignal): Promise<ParsedDocument> {
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.running++;
    try {
      return await runThread(input, this.limits, signal);
    } finally {
      this.running--;
      this.queue.shift()?.();
    }
  }
}

function runThread(
  input: Omit<ParseInput, 'limits'>,
  limits: ParseLimits,
  signal?: AbortSignal,
): Promise<ParsedDocument> {
  const { fileName } = input;
  return new Promise((resolve, reject) => {
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      // Not the parent's flags: `--import tsx` is registered above where needed, heap flags are set below.
      execArgv: [],
      workerData: { entry: THREAD_ENTRY, tsx: TSX },
      resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb, maxYoungGenerationSizeMb: 16 },
    });
    let settled = false;
    let visionFailure: unknown;
    let visionPending = 0;
    const finish = (err: unknown, doc?: ParsedDocument) => {
      if (settled) return;
      settled = true;
      clock.stop();
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (err === undefined) resolve(doc!);
      else reject(err instanceof Error ? err : new Error('parse failed', { cause: err }));
    };
    const clock = new WorkClock(limits.timeoutMs, () =>
      finish(limitExceeded('timeoutMs', fileName, 'parsing it took longer than the limit', limits)),
    );
    const onAbort = () => finish(signal!.reason ?? new Error('parse cancelled'));
    signal?.addEventListener('abort', onAbort);
    if (signal?.aborted) onAbort();

    const answerVision = async (id: number, request: Parameters<VisionReader>[0]) => {
      if (visionPending++ === 0) clock.pause();
      let reply: ToThread;
      try {
        reply = { type: 'vision-reply', id, text: await input.vision(request) };
      } catch (err) {
        // The model's own error is what the activity must see (a refusal is final, an outage is retried).
        visionFailure ??= err;
        reply = { type: 'vision-reply', id, failed: true };
      }
      if (--visionPending === 0) clock.resume();
      if (!settled) worker.postMessage(reply);
    };

    worker.on('message', (m: FromThread) => {
      if (m.type === 'started') clock.resume();
      else if (m.type === 'vision') void answerVision(m.id, m.request);
      else if (m.type === 'done') finish(undefined, m.doc);
      else if (visionFailure !== undefined) finish(visionFailure);
      else if (m.limit) finish(new LimitExceeded(m.limit, m.message));
      else if (m.parseError) finish(new ParseError(m.message));
      else finish(new Error(`parsing ${fileName} failed: ${m.message}`));
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        finish(limitExceeded('maxHeapMb', fileName, 'parsing it needed more memory than the limit', limits));
      } else finish(err);
    });
    worker.on('exit', (code) => finish(new Error(`the parse thread of ${fileName} exited (${code})`)));
    const message: ToThread = {
      type: 'parse',
      input: {
        fileName,
        bytes: input.bytes,
        strategy: input.strategy,
        customInstructions: input.customInstructions,
        limits,
      },
    };
    worker.postMessage(message);
  });
}

/** A countdown that runs only while the parse is working: from the thread's start of work (not its own start-up,
 * which under tsx compiles the parsers), paused while it waits for the vision model. */
class WorkClock {
  private left: number;
  private since = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    budgetMs: number,
    private readonly onTimeout: () => void,
  ) {
    this.left = budgetMs;
  }

  pause(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.left -= Date.now() - this.since;
  }

  resume(): void {
    if (this.timer) return;
    this.since = Date.now();
    this.timer = setTimeout(this.onTimeout, Math.max(0, this.left));
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
