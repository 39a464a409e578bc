import { Worker } from 'node:worker_threads';

/**
 * The model's inference on a worker thread. onnxruntime-node runs a session synchronously on the calling
 * thread (measured here: about 1.5 ms per token on one core, so seconds per batch of long chunks), which on the
 * main thread would stall Temporal heartbeats and every other activity of the worker process.
 *
 * The thread's code is a string evaluated by Node rather than a file of its own, so the same code runs under
 * tsx (tests, benches) and from dist/ without a build step for a second entry point.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ort);
ort.InferenceSession.create(workerData.modelPath, {
  intraOpNumThreads: workerData.threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
}).then(
  (session) => {
    parentPort.on('message', ({ id, ids, mask, dims }) => {
      session
        .run({
          input_ids: new ort.Tensor('int64', ids, dims),
          attention_mask: new ort.Tensor('int64', mask, dims),
          token_type_ids: new ort.Tensor('int64', new BigInt64Array(ids.length), dims),
        })
        .then(
          (out) => {
            const data = out.last_hidden_state.data;
            parentPort.postMessage({ id, data }, [data.buffer]);
          },
          (err) => parentPort.postMessage({ id, error: String((err && err.stack) || err) }),
        );
    });
    parentPort.postMessage({ ready: true });
  },
  (err) => parentPort.postMessage({ ready: false, error: String((err && err.stack) || err) }),
);
`;

interface Reply {
  id?: number;
  ready?: boolean;
  data?: Float32Array;
  error?: string;
}

export class OnnxThread {
  private seq = 0;
  private readonly pending = new Map<
    number,
    { resolve: (d: Float32Array) => void; reject: (e: Error) => void }
  >();

  private constructor(private readonly worker: Worker) {
    worker.on('message', (m: Reply) => {
      const call = m.id === undefined ? undefined : this.pending.get(m.id);
      if (!call || m.id === undefined) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.data) call.resolve(m.data);
      else call.reject(new Error(`local embedding model failed: ${m.error}`));
    });
    worker.on('error', (err) => this.failAll(err));
    worker.on('exit', (code) => this.failAll(new Error(`local embedding model thread exited (${code})`)));
    // An idle model must not keep a process (a test run, the CLI) alive; a running call must.
    worker.unref();
  }

  static async start(modelPath: string, threads: number): Promise<OnnxThread> {
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { modelPath, threads, ort: require.resolve('onnxruntime-node') },
    });
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (m: Reply) =>
        m.ready ? resolve() : reject(new Error(`cannot load ${modelPath}: ${m.error}`)),
      );
      worker.once('error', reject);
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    return new OnnxThread(worker);
  }

  /** last_hidden_state for a [batch, length] input, as one [batch, length, dims] array. */
  run(
    ids: BigInt64Array<ArrayBuffer>,
    mask: BigInt64Array<ArrayBuffer>,
    dims: [number, number],
  ): Promise<Float32Array> {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, ids, mask, dims }, [ids.buffer, mask.buffer]);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private failAll(err: Error): void {
    for (const call of this.pending.values()) call.reject(err);
    this.pending.clear();
  }
}
