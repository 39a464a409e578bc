import { fork } from 'node:child_process';
import { LimitExceeded, limitExceeded } from './limits';
import type { FromChild, ToChild } from './sandbox-protocol';
import {
  ParseError,
  type ParsedDocument,
  type ParseInput,
  type ParseLimits,
  type VisionReader,
} from './types';

/**
 * Parses files off the worker's heap (issue 32: a 119 KB DOCX grew the worker to 4.7 GB and V8 aborted it,
 * taking every other activity of the process with it).
 *
 * Design:
 * - Each file is parsed in a child process of its own (sandbox-child.ts) with `--max-old-space-size` set to
 *   KB_PARSE_MAX_HEAP_MB: a parse that needs more aborts that process, never the worker. A worker thread with V8
 *   `resourceLimits` was tried first: on Node 24 a thread that runs out of heap can abort the whole process while
 *   its isolate is disposed (reproduced with a JSON of 3 million objects at a 128 MB limit), so the budget is a
 *   process. A process per file costs its start (about 0.1 s from dist/, more under tsx) and the parsers' loading;
 *   it also means no heap a hostile file filled is reused for the next. KB_PARSE_CONCURRENCY of them run at once
 *   per worker, so the worst case is that many times the heap limit.
 * - A wall-clock limit (KB_PARSE_TIMEOUT_MS) kills the process, which also stops a parser stuck in a synchronous
 *   loop (the old per-step timers in pdf.ts only fired when pdf.js yielded).
 * - Vision-model calls (images, scanned PDF pages) stay in the worker, where the LLM client, its credentials and
 *   the outbound guard live: the child sends the image over IPC and waits for the text. Time spent waiting for the
 *   model does not count against KB_PARSE_TIMEOUT_MS (a long scan is legitimately slow there); the model calls
 *   have their own client timeouts and the activity's.
 * - IPC uses the structured-clone serialization, so the file's bytes travel as bytes, not as JSON.
 * The child runs the compiled sandbox-child.js from dist/, or sandbox-child.ts with tsx's require hook when this
 * file itself runs as TypeScript (tests, `node --import tsx`).
 */
const CHILD_ENTRY = require.resolve('./sandbox-child');
const TSX = __filename.endsWith('.ts') ? ['--require', require.resolve('tsx/cjs')] : [];
const CHILD_ENV = Object.fromEntries(
  ['PATH', 'TMPDIR', 'NODE_ENV'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])),
);

export class ParseSandbox {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    readonly limits: ParseLimits,
    private readonly concurrency = 2,
  ) {}

  /** Parses waiting for a free slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * parseDocument in a process of its own, under `limits`; throws what parseDocument would (ParseError…). The
   * strict budget, for a file whose earlier parse died with its worker, halves the heap and the time.
   */
  async parse(
    input: Omit<ParseInput, 'limits'>,
    signal?: AbortSignal,
    strict = false,
  ): Promise<ParsedDocument> {
    const limits = strict
      ? {
          ...this.limits,
          maxHeapMb: Math.max(32, Math.floor(this.limits.maxHeapMb / 2)),
          timeoutMs: Math.ceil(this.limits.timeoutMs / 2),
        }
      : this.limits;
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.running++;
    try {
      return await runChild(input, limits, signal);
    } finally {
      this.running--;
      this.queue.shift()?.();
    }
  }
}

function runChild(
  input: Omit<ParseInput, 'limits'>,
  limits: ParseLimits,
  signal?: AbortSignal,
): Promise<ParsedDocument> {
  const { fileName } = input;
  return new Promise((resolve, reject) => {
    const child = fork(CHILD_ENTRY, [], {
      execArgv: [...TSX, `--max-old-space-size=${limits.maxHeapMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // Nothing of the worker's configuration (database, S3 and model credentials) in a process that reads
      // hostile input.
      env: CHILD_ENV,
    });
    let settled = false;
    let visionFailure: unknown;
    let visionPending = 0;
    const finish = (err: unknown, doc?: ParsedDocument) => {
      if (settled) return;
      settled = true;
      clock.stop();
      signal?.removeEventListener('abort', onAbort);
      child.kill('SIGKILL');
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
      let reply: ToChild;
      try {
        reply = { type: 'vision-reply', id, text: await input.vision(request) };
      } catch (err) {
        // The model's own error is what the activity must see (a refusal is final, an outage is retried).
        visionFailure ??= err;
        reply = { type: 'vision-reply', id, failed: true };
      }
      if (--visionPending === 0) clock.resume();
      // A child that died meanwhile has closed the channel; its exit settles the parse.
      if (!settled && child.connected) child.send(reply);
    };

    child.on('message', (m: FromChild) => {
      if (m.type === 'started') clock.resume();
      else if (m.type === 'vision') void answerVision(m.id, m.request);
      else if (m.type === 'done') finish(undefined, m.doc);
      else if (visionFailure !== undefined) finish(visionFailure);
      else if (m.limit) finish(new LimitExceeded(m.limit, m.message));
      else if (m.parseError) finish(new ParseError(m.message));
      else finish(new Error(`parsing ${fileName} failed: ${m.message}`));
    });
    child.on('error', (err) => finish(err));
    child.on('exit', (code, exitSignal) => {
      // V8 aborts a process out of heap (SIGABRT, or 134 through a shell); anything else is not the file's doing.
      if (exitSignal === 'SIGABRT' || code === 134) {
        finish(limitExceeded('maxHeapMb', fileName, 'parsing it needed more memory than the limit', limits));
      } else finish(new Error(`the parse process of ${fileName} exited (${exitSignal ?? code})`));
    });
    const message: ToChild = {
      type: 'parse',
      input: {
        fileName,
        bytes: input.bytes,
        strategy: input.strategy,
        customInstructions: input.customInstructions,
        limits,
      },
    };
    child.send(message);
  });
}

/** A countdown that runs only while the parse is working: from the child's start of work (not its own start-up,
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
