/**
 * The local chat model (Gemma 3 270M Q4_K_M on node-llama-cpp's prebuilt CPU binary): load time, first-token
 * latency and generation speed in tokens/s.
 *
 *   npm run bench -- local-model        (it needs no stack; LOCAL_LLM_MODEL_PATH is provisioned by run.mjs)
 * Knobs (env): BENCH_CALLS (8 per arm), BENCH_MAX_TOKENS (128), LOCAL_LLM_THREADS (the service default).
 *
 * Two arms on the one loaded model, alternating call by call so machine load hits both alike:
 * - `service`: what a turn does — the OpenAI SDK client of the local provider, streamed through the
 *   in-process OpenAI-compatible endpoint (SSE encoding and parsing included);
 * - `direct`, the baseline: LocalModel.generate with the same prompt, no SDK and no SSE.
 * First token: from the call to the first non-empty text (prompt evaluation included, model already loaded).
 * Tokens/s: completion tokens after the first, over the time from the first text to the end.
 * Then one structured-output call (json_schema through a grammar) and three calls at once (the queue).
 */
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import { loadConfig } from '@lib/config';
import { closeLlmClient, createLlmClient, localModelOf } from '@lib/llm';
import { promptParts } from '@lib/local-llm/prompt';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const CALLS = num('BENCH_CALLS', 8);
const MAX_TOKENS = num('BENCH_MAX_TOKENS', 128);

const SYSTEM = 'You are a helpful assistant. Answer in detail.';
const QUESTIONS = [
  'Tell me about the history of Paris.',
  'Explain how a bicycle works.',
  'Describe a walk through a forest in autumn.',
  'What should I pack for a week of hiking?',
];

interface Sample {
  firstMs: number;
  tokens: number;
  decodeMs: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};
const perSecond = (samples: Sample[]) => {
  const tokens = samples.reduce((n, s) => n + Math.max(0, s.tokens - 1), 0);
  const ms = samples.reduce((n, s) => n + s.decodeMs, 0);
  return ms > 0 ? (tokens * 1000) / ms : NaN;
};

async function viaService(client: OpenAI, question: string): Promise<Sample> {
  const start = performance.now();
  let first = 0;
  let last = 0;
  let tokens = 0;
  const stream = await client.chat.completions.create({
    model: 'local',
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: MAX_TOKENS,
    temperature: 0.7,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: question },
    ],
  });
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta.content) {
      last = performance.now();
      first ||= last;
    }
    if (chunk.usage) tokens = chunk.usage.completion_tokens;
  }
  return { firstMs: first - start, tokens, decodeMs: last - first };
}

async function direct(client: OpenAI, question: string): Promise<Sample> {
  const model = localModelOf(client)!;
  const start = performance.now();
  let first = 0;
  let last = 0;
  const result = await model.generate({
    prompt: promptParts([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: question },
    ]),
    schema: null,
    maxTokens: MAX_TOKENS,
    temperature: 0.7,
    onText: () => {
      last = performance.now();
      first ||= last;
    },
  });
  return { firstMs: first - start, tokens: result.completionTokens, decodeMs: last - first };
}

async function main() {
  const config = loadConfig({ ...process.env, LLM_PROVIDER: 'local', JWT_SECRET: 'x'.repeat(32) });
  const { local } = config.llm;
  if (!local.modelPath) throw new Error('LOCAL_LLM_MODEL_PATH is not set: run it with npm run bench');
  const client = createLlmClient(config.llm);
  const model = localModelOf(client)!;
  let t = performance.now();
  await model.load();
  const loadMs = performance.now() - t;
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  console.log(
    `local model ${model.name}: loaded in ${loadMs.toFixed(0)} ms, RSS ${rssMb.toFixed(0)} MB, ` +
      `${local.threads} thread(s), context ${local.contextSize}, max ${MAX_TOKENS} tokens per call`,
  );

  await viaService(client, QUESTIONS[0]!); // warm-up
  const arms: Record<'service' | 'direct', Sample[]> = { service: [], direct: [] };
  for (let i = 0; i < CALLS; i++) {
    // never the question the call before asked: its prompt would be in the sequence's cache already
    const q = (k: number) => QUESTIONS[(i * 2 + k) % QUESTIONS.length]!;
    const pair: Array<['service' | 'direct', () => Promise<Sample>]> = [
      ['service', () => viaService(client, q(0))],
      ['direct', () => direct(client, q(1))],
    ];
    if (i % 2) pair.reverse();
    for (const [arm, run] of pair) arms[arm].push(await run());
  }
  for (const [arm, samples] of Object.entries(arms))
    console.log(
      `${arm.padEnd(8)} first token p50 ${median(samples.map((s) => s.firstMs)).toFixed(0)} ms ` +
        `(min ${Math.min(...samples.map((s) => s.firstMs)).toFixed(0)}, max ${Math.max(...samples.map((s) => s.firstMs)).toFixed(0)}), ` +
        `${perSecond(samples).toFixed(1)} tokens/s, ${median(samples.map((s) => s.tokens))} tokens per answer p50`,
    );
  const ratio = median(arms.service.map((s) => s.firstMs)) / median(arms.direct.map((s) => s.firstMs));
  console.log(
    `service / direct: first token ×${ratio.toFixed(2)}, tokens/s ×${(perSecond(arms.service) / perSecond(arms.direct)).toFixed(2)}`,
  );

  t = performance.now();
  const structured = await client.chat.completions.create({
    model: 'local',
    messages: [{ role: 'user', content: 'Describe Paris: its country, population and landmarks.' }],
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'city',
        schema: {
          type: 'object',
          properties: {
            city: { type: 'string' },
            country: { type: 'string' },
            population: { type: 'integer' },
            landmarks: { type: 'array', items: { type: 'string' }, maxItems: 3 },
          },
          required: ['city', 'country', 'population', 'landmarks'],
        },
      },
    },
  });
  const ms = performance.now() - t;
  const usage = structured.usage!;
  console.log(
    `structured output (json_schema grammar): ${ms.toFixed(0)} ms for ${usage.completion_tokens} tokens ` +
      `(${((usage.completion_tokens * 1000) / ms).toFixed(1)} tokens/s end to end)`,
  );

  t = performance.now();
  const firsts = await Promise.all(
    QUESTIONS.slice(0, 3).map((q) => viaService(client, q).then((s) => s.firstMs)),
  );
  console.log(
    `3 calls at once (concurrency ${local.concurrency}): first tokens after ` +
      `${firsts.map((f) => f.toFixed(0)).join(' / ')} ms, all done in ${(performance.now() - t).toFixed(0)} ms`,
  );
  await closeLlmClient(client);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
