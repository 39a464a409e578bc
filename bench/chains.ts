/**
 * Action chain runs against a bare Temporal baseline, in one run:
 *
 * 1. Per-step overhead: RUNS (20) runs of a chain of STEPS (10) steps, one after the other; each step one model
 *    call with an output schema (the scripted LLM answers at once). Baseline: a workflow of STEPS bare
 *    activities (bench/chains/bare-workflow.ts, its own worker and task queue), each the same model call and
 *    nothing else. Ratio of time per step, service / bare (target ≤ 1.3): what a step costs beyond the
 *    activity round trip (guards, rendering, state read and written in the database, bookkeeping).
 *    Measured warm: WARMUP (100) runs of each arm first. The stack's database is a fresh JVM at every bench start
 *    and needs on the order of a thousand steps before its hot paths are compiled (its JIT compiler then takes
 *    a core of its own, and a step's writes wait on interpreted code); a service runs warm. The first COLD (10)
 *    warm-up runs of each arm are printed as the cold figure.
 * 2. Fan-out: one step over FANOUT (1000, 10000) elements: elements/s, peak RSS of this process (API
 *    services + worker + scripted LLM), the history of the run (events and bytes, parent and every slice;
 *    Temporal refuses a history past 51,200 events or 50 MB).
 *
 * Everything runs in this process, as in the tests. Needs the stack env:
 *   STACK_PORT_OFFSET=500 node bench/run.mjs chains
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { workflowIds } from '@contracts';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLlmClient } from '@lib/llm';
import { createLogger } from '@lib/logger';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import { startScriptedLlm } from '@test/helpers/llm';
import { startTestWorker } from '@test/helpers/worker';
import { startBareWorker } from './lib/bare-worker';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const STEPS = num('STEPS', 10);
const RUNS = num('RUNS', 20);
const WARMUP = num('WARMUP', 100);
const COLD = Math.min(num('COLD', 10), WARMUP);
const FANOUTS = (process.env.FANOUT ?? '1000,10000').split(',').map(Number);
const OUTPUT = { type: 'object', properties: { ok: { type: 'string' } }, required: ['ok'] };
const ANSWER = JSON.stringify({ ok: 'yes' });
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(`load average at start: ${load()}`);
  const llm = await startScriptedLlm();
  llm.setDefault({ content: ANSWER });
  const config = loadConfig({
    ...process.env,
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: llm.apiKey,
    TEMPORAL_TASK_QUEUE: `bench-chains-${randomBytes(4).toString('hex')}`,
    // The bench's largest fan-out is over the default ceiling (1000).
    CHAIN_FANOUT_MAX: String(Math.max(1000, ...FANOUTS)),
  });
  const deps = await createDeps(config, { logger: createLogger('silent') });
  const worker = await startTestWorker({ config });
  const boot = await bootstrapOrganization(deps, {
    orgName: 'Chain bench',
    email: `bench-${randomBytes(4).toString('hex')}@example.test`,
    name: 'Bench',
  });
  const org = boot.organizationId;
  // Every element is a billed model call: enough credits for the largest fan-out.
  await deps.services.credits.grant(org, 1_000_000, 'benchmark');
  const ctx = { organizationId: org, userId: boot.userId } as Parameters<
    typeof deps.services.chains.create
  >[0];
  const client = deps.temporal.client;

  // The baseline worker: bare activities, each the same model call a step makes.
  const sdk = createLlmClient(config.llm);
  const bare = await startBareWorker(config.temporal, require.resolve('./chains/bare-workflow'), {
    async bareModelCall() {
      const res = await sdk.chat.completions.create({
        model: config.chains.model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say ok' },
        ],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'step_output', schema: OUTPUT, strict: false },
        },
      });
      return res.choices[0]?.message.content ?? '';
    },
  });

  // --- 1. per-step overhead -----------------------------------------------------------------------------
  const chain = await deps.services.chains.create(ctx, {
    name: 'Bench',
    description: 'steps',
    llmInstructions: 'Be brief.',
    steps: Array.from({ length: STEPS }, (_, i) => ({
      stepOrder: i + 1,
      instructions: `Say ok {{input.n}} ${i}`,
      outputSchema: OUTPUT,
    })),
  });
  const runChain = async (payload: Record<string, unknown>) => {
    const { runId } = await deps.services.chainRuns.startRun(org, {
      actionChainId: chain.actionChainId,
      payload,
      triggerType: 'api',
      startedByUserId: boot.userId,
    });
    const result = (await client.workflow.getHandle(workflowIds.chainRun(org, runId, 1)).result()) as {
      status: string;
    };
    if (result.status !== 'success') throw new Error(`run failed: ${JSON.stringify(result)}`);
    return runId;
  };
  const runBare = (): Promise<number> =>
    client.workflow.execute<(steps: number) => Promise<number>>('bareStepsWorkflow', {
      taskQueue: bare.taskQueue,
      workflowId: `bench-bare-${randomBytes(6).toString('hex')}`,
      args: [STEPS],
    });
  /** `runs` runs of each arm, alternating which goes first; time per step of each run. */
  const measure = async (runs: number) => {
    const times = { chain: [] as number[], bare: [] as number[] };
    for (let i = 0; i < runs; i++) {
      const arms = i % 2 ? (['bare', 'chain'] as const) : (['chain', 'bare'] as const);
      for (const arm of arms) {
        const t0 = performance.now();
        if (arm === 'chain') await runChain({ n: i });
        else await runBare();
        times[arm].push((performance.now() - t0) / STEPS);
      }
    }
    return times;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const report = (title: string, times: { chain: number[]; bare: number[] }) => {
    const perStep = { chain: median(times.chain), bare: median(times.bare) };
    console.log(`\n${title}:`);
    console.log(`  chain step        ${perStep.chain.toFixed(1)} ms`);
    console.log(`  bare activity     ${perStep.bare.toFixed(1)} ms`);
    console.log(`  ratio             ${(perStep.chain / perStep.bare).toFixed(2)}x`);
  };
  const cold = await measure(COLD);
  await measure(WARMUP - COLD);
  report(`per step, cold (median of the first ${COLD} runs of ${STEPS} steps after the stack started)`, cold);
  report(
    `per step, warm (median of ${RUNS} runs of ${STEPS} steps after ${WARMUP}; target <= 1.3x)`,
    await measure(RUNS),
  );

  // --- 2. fan-out ---------------------------------------------------------------------------------------
  const fan = await deps.services.chains.create(ctx, {
    name: 'Fan-out bench',
    description: 'fan-out',
    llmInstructions: 'Be brief.',
    steps: [
      {
        stepOrder: 1,
        forEachElement: '$.input.items',
        instructions: 'Say ok {{element}}',
        outputSchema: OUTPUT,
      },
    ],
  });
  console.log(
    `\nfan-out (slices of ${config.chains.fanOutBatch}, ${config.chains.fanOutConcurrency} elements at a time):`,
  );
  for (const n of FANOUTS) {
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 200);
    const t0 = performance.now();
    const { runId } = await deps.services.chainRuns.startRun(org, {
      actionChainId: fan.actionChainId,
      payload: { items: Array.from({ length: n }, (_, i) => i) },
      triggerType: 'api',
      startedByUserId: boot.userId,
    });
    const parentId = workflowIds.chainRun(org, runId, 1);
    const result = (await client.workflow.getHandle(parentId).result()) as { status: string };
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const run = await deps.repos.tenant(org).chainRuns.get(runId);
    const outputs = (JSON.parse(run!.stateJson) as { ok: unknown[] }).ok?.length ?? 0;
    const stepId = Object.keys(run!.stepResults)[0]!;
    const histories = [parentId];
    for (let from = 0; from < n; from += config.chains.fanOutBatch)
      histories.push(workflowIds.chainFanOut(parentId, stepId, from));
    let events = 0;
    let bytes = 0;
    let largest = 0;
    for (const id of histories) {
      const history = await client.workflow.getHandle(id).fetchHistory();
      events += history.events?.length ?? 0;
      largest = Math.max(largest, history.events?.length ?? 0);
      bytes += JSON.stringify(history).length;
    }
    console.log(
      `  ${String(n).padStart(6)} elements: ${result.status}, ${outputs} outputs, ${(n / seconds).toFixed(0)} elements/s ` +
        `(${seconds.toFixed(1)} s), peak RSS ${mb(peak)}, history ${events} events in ${histories.length} ` +
        `workflows (largest ${largest}), ~${mb(bytes)} JSON`,
    );
  }
  console.log(`\nload average at end: ${load()}`);
  await bare.stop();
  await worker.stop();
  await closeDeps(deps);
  await llm.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
