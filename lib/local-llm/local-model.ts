import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import type { Logger } from '@lib/logger';
import { toGrammarSchema } from './grammar-schema';
import { render, STOP_TRIGGERS, type PromptParts } from './prompt';

type NodeLlamaCpp = typeof import('node-llama-cpp');

export interface LocalModelSettings {
  /** the GGUF file (LOCAL_LLM_MODEL_PATH) */
  modelPath?: string;
  threads: number;
  /** tokens per sequence: prompt and answer */
  contextSize: number;
  maxTokens: number;
  /** sequences, i.e. calls that run at once */
  concurrency: number;
}

export interface Generation {
  prompt: PromptParts;
  /** JSON Schema the answer must be (through a grammar); null: free text */
  schema: unknown;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  stop?: string[];
  onText?: (text: string) => void;
  signal?: AbortSignal;
}

export interface Generated {
  text: string;
  promptTokens: number;
  completionTokens: number;
  finish: 'stop' | 'length';
}

interface Loaded {
  lib: NodeLlamaCpp;
  model: LlamaModel;
  context: LlamaContext;
}

// tsc (module commonjs) compiles import() into require(), which cannot load node-llama-cpp: its ES modules use
// top-level await. Inside a Function body the import() stays a real one (the argument is ours, never input).
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<unknown>;

/**
 * The local chat model: node-llama-cpp's prebuilt CPU binary (never built, nothing downloaded) running a GGUF
 * file. Loaded once per process on the first call, so processes that never ask it (and tests on the scripted
 * model) never load it. A llama.cpp context sequence is not re-entrant: each call holds one of `concurrency`
 * sequences, the others wait in a first-come queue.
 */
export class LocalModel {
  readonly name: string;
  private loaded?: Promise<Loaded>;
  private readonly free: LlamaContextSequence[] = [];
  private readonly waiting: Array<(sequence: LlamaContextSequence) => void> = [];

  constructor(
    private readonly settings: LocalModelSettings,
    private readonly logger?: Logger,
  ) {
    this.name = settings.modelPath ? basename(settings.modelPath).replace(/\.gguf$/i, '') : 'local';
  }

  /** Loads the model now (it otherwise loads on the first call). */
  load(): Promise<Loaded> {
    this.loaded ??= this.loadOnce().catch((err: unknown) => {
      this.loaded = undefined; // a later call tries again (the file may be provisioned meanwhile)
      throw err;
    });
    return this.loaded;
  }

  private async loadOnce(): Promise<Loaded> {
    const { modelPath, threads, contextSize, concurrency } = this.settings;
    if (!modelPath)
      throw new Error(
        'the local model needs LOCAL_LLM_MODEL_PATH (npm start and npm test set it), or set OPENAI_API_KEY',
      );
    const started = Date.now();
    const lib = (await importModule(pathToFileURL(require.resolve('node-llama-cpp')).href)) as NodeLlamaCpp;
    const llama = await lib.getLlama({
      gpu: false,
      build: 'never',
      skipDownload: true,
      usePrebuiltBinaries: true,
      progressLogs: false,
      logLevel: lib.LlamaLogLevel.error,
      maxThreads: threads,
    });
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ contextSize, sequences: concurrency, threads });
    for (let i = 0; i < concurrency; i++) this.free.push(context.getSequence());
    this.logger?.info(
      { model: this.name, ms: Date.now() - started, threads, contextSize: context.contextSize, concurrency },
      'local model loaded',
    );
    return { lib, model, context };
  }

  private acquire(signal?: AbortSignal): Promise<LlamaContextSequence> {
    const sequence = this.free.pop();
    if (sequence) return Promise.resolve(sequence);
    return new Promise((resolve, reject) => {
      const take = (s: LlamaContextSequence) => {
        signal?.removeEventListener('abort', abort);
        resolve(s);
      };
      const abort = () => {
        const at = this.waiting.indexOf(take);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal?.reason as Error);
      };
      this.waiting.push(take);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }

  private release(sequence: LlamaContextSequence): void {
    const next = this.waiting.shift();
    if (next) next(sequence);
    else this.free.push(sequence);
  }

  async generate(g: Generation): Promise<Generated> {
    const { lib, model } = await this.load();
    g.signal?.throwIfAborted();
    const sequence = await this.acquire(g.signal);
    try {
      const maxTokens = Math.min(g.maxTokens ?? this.settings.maxTokens, this.settings.maxTokens);
      const input = this.fit(model, g.prompt, sequence.contextSize - maxTokens);
      const grammar =
        g.schema == null
          ? undefined
          : await model.llama.createGrammarForJsonSchema(
              toGrammarSchema(g.schema) as Parameters<typeof model.llama.createGrammarForJsonSchema>[0],
            );
      const completion = new lib.LlamaCompletion({ contextSequence: sequence });
      let completionTokens = 0;
      // The prompt ends with "Assistant:": the answer's leading space is not part of it.
      let started = false;
      const result = await completion.generateCompletionWithMeta(input, {
        maxTokens,
        temperature: g.temperature ?? 0.7,
        topP: g.topP,
        seed: g.seed,
        signal: g.signal,
        grammar,
        // A 270M model falls into loops ("2222…", the same phrase again): penalise repeats, also inside JSON.
        repeatPenalty: { penalty: 1.1 },
        dryRepeatPenalty: { strength: 0.8, lastTokens: 256 },
        customStopTriggers: grammar ? undefined : [...STOP_TRIGGERS, ...(g.stop ?? [])],
        onToken: (tokens) => (completionTokens += tokens.length),
        onTextChunk: (chunk) => {
          const out = started ? chunk : chunk.trimStart();
          if (!out) return;
          started = true;
          g.onText?.(out);
        },
      });
      completion.dispose({ disposeSequence: false });
      return {
        text: result.response.trim(),
        promptTokens: input.length,
        completionTokens,
        finish: result.metadata.stopReason === 'maxTokens' ? 'length' : 'stop',
      };
    } finally {
      this.release(sequence);
    }
  }

  /** The prompt's tokens within `budget`: the oldest turns are left out first, then the start is cut. */
  private fit(model: LlamaModel, parts: PromptParts, budget: number): Token[] {
    const limit = Math.max(64, budget);
    for (let from = 0; from < parts.turns.length; from++) {
      const tokens = model.tokenize(render(parts, from));
      if (tokens.length <= limit) return tokens;
    }
    const tokens = model.tokenize(render(parts, Math.max(0, parts.turns.length - 1)));
    return tokens.slice(-limit);
  }

  async close(): Promise<void> {
    if (!this.loaded) return;
    const loaded = await this.loaded.catch(() => undefined);
    if (!loaded) return;
    await loaded.context.dispose();
    await loaded.model.dispose();
    await loaded.model.llama.dispose();
  }
}
