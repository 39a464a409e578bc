/**
 * Webhook deliveries against the bare Temporal workflow-start rate, in one run:
 *
 * - Baseline: DELIVERIES (500) workflows started through the Temporal client, CONCURRENCY (20) at a time, each a
 *   workflow that completes at once (bench/lib/noop-workflow.ts, its own worker in this process); starts/s
 *   until the last start was answered, and until every one completed. Then the same with a workflow that runs one
 *   activity doing nothing: the least any execution that runs a step as an activity costs.
 * - Service: the API and the worker as they ship, each its own process (bench/lib/service-processes.ts), as
 *   `npm start` runs them. DELIVERIES POSTs to `…/webhooks/{id}/execute` over HTTP, CONCURRENCY at a time, to a
 *   webhook with one action-chain handler (a one-step chain the scripted LLM answers at once). Accepted
 *   deliveries/s (answers), then completed executions/s: until every delivery's workflow, its handler's workflow
 *   and the chain run it started have ended, and the chain runs are counted (zero lost: every accepted delivery
 *   has exactly one run).
 * - Direct chain runs: DELIVERIES runs of the same one-step chain started through the service layer from this
 *   process (ChainRunsService startRun: the run created, its workflow started; no webhook) and run by the same
 *   worker process, CONCURRENCY at a time; completed runs/s. This is the chain work every delivery must do, so
 *   deliveries / direct chain runs is what the webhook layer costs.
 * - Intake alone: the service's worker stopped, DELIVERIES more deliveries taken in, against DELIVERIES bare
 *   starts on a queue no worker polls yet: how fast each burst is accepted when no execution competes for the
 *   cores (as when workers run apart from the API). Then workers start and every execution must complete (the
 *   deliveries' chain runs are counted: zero lost).
 * Ratios: completed deliveries/s over bare workflows completed/s (what can be kept up), and over direct chain
 * runs/s; the bare workflow with an activity and the direct chain runs over bare workflows (what a delivery's
 * execution costs before the webhook layer adds anything); accepted deliveries/s over bare starts answered/s
 * (how fast a burst is taken in, durably: what it leaves queued completes at the first rate). Each arm also
 * reports the CPU it took per workflow, delivery or run, by process (/proc): this process (load, the bare
 * worker, the scripted LLM), the API, the worker, the database, Temporal and Redis.
 * `STACK_PORT_OFFSET=500 node bench/run.mjs webhooks`
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import { startScriptedLlm } from '@test/helpers/llm';
import { bareTaskQueue, startBareWorker } from './lib/bare-worker';
import { cpuAccount, procStats, stackPids } from './lib/proc';
import { startApiProcess, startWorkerProcess, stopProcess } from './lib/service-processes';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const DELIVERIES = num('DELIVERIES', 500);
const CONCURRENCY = num('CONCURRENCY', 20);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

/** Runs `task(i)` for i < n, `concurrency` at a time. */
async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

async function waitFor(check: () => Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 250));
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(`load average at start: ${load()}`);
  const llm = await startScriptedLlm();
  llm.setDefault({ content: '{"ok": "yes"}' });
  // What the API and worker processes get on top of the stack's env, and this process's own config.
  const serviceEnv = {
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: llm.apiKey,
    TEMPORAL_TASK_QUEUE: `bench-webhooks-${randomBytes(4).toString('hex')}`,
    WEBHOOK_RATE_LIMIT_PER_MINUTE: String(1_000_000),
  };
  const config = loadConfig({ ...process.env, ...serviceEnv });
  const deps = await createDeps(config, { logger: createLogger('silent') });
  let worker = startWorkerProcess(serviceEnv);
  const api = await startApiProcess(serviceEnv);
  const client = deps.temporal.client;
  const stack = stackPids(config);
  /** CPU by process over one arm (the worker's unless it is stopped), printed per unit of work. */
  const account = (withWorker = true) =>
    cpuAccount({
      bench: process.pid,
      API: api.child.pid,
      ...(withWorker ? { worker: worker.pid } : {}),
      ...stack,
    });
  const cpuLine = (cpu: ReturnType<typeof account>, per: string) => {
    const parts = Object.entries(cpu.total).map(([name, ms]) => [name, ms / DELIVERIES] as const);
    const sum = parts.reduce((n, [, ms]) => n + ms, 0);
    return `  CPU per ${per}: ${sum.toFixed(1)} ms (${parts.map(([n, ms]) => `${n} ${ms.toFixed(1)}`).join(', ')})`;
  };

  // --- the organization, the chains and the webhook ------------------------------------------------------
  const boot = await bootstrapOrganization(deps, {
    orgName: 'Webhook bench',
    email: `bench-${randomBytes(4).toString('hex')}@example.test`,
    name: 'Bench',
  });
  const org = boot.organizationId;
  // Every arm queues all of its work at once: the organization's bounds (docs/admission.md) must not refuse it, as
  // an operator raises them for an organization that sends bursts.
  for (const kind of ['chain_runs', 'webhook_deliveries'] as const)
    await deps.services.admission.setLimit(org, kind, 10 * DELIVERIES);
  const ctx = { organizationId: org, userId: boot.userId } as Parameters<
    typeof deps.services.chains.create
  >[0];
  const chain = await deps.services.chains.create(ctx, {
    name: 'Bench',
    description: 'one step',
    llmInstructions: 'Be brief.',
    steps: [{ stepOrder: 1, instructions: 'Say ok to {{input.n}}' }],
  });
  const webhook = await deps.services.webhooks.create(ctx, { name: 'Bench' });
  await deps.services.webhookHandlers.create(ctx, webhook.webhookId, {
    handlerType: 'action-chain',
    actionChainId: chain.actionChainId,
    instructions: 'Run',
    inputMapping: { n: '{{body.n}}' },
  });
  /** Runs of `actionChainId` that have ended (success or failed), among its first `upTo`. */
  const finishedRuns = async (actionChainId: string, upTo = DELIVERIES) => {
    let done = 0;
    for (let offset = 0; offset < upTo; offset += 100) {
      const page = await deps.repos.tenant(org).chainRuns.list(actionChainId, {
        limit: 100,
        offset,
        orderBy: 'created_at',
        descending: false,
      });
      done += page.items.filter((r) => r.status === 'success' || r.status === 'failed').length;
    }
    return done;
  };

  // The worker process polls once it has bundled the workflows: one run of a chain of its own, to the end, before
  // anything is measured.
  const warmUp = await deps.services.chains.create(ctx, {
    name: 'Bench warm-up',
    description: 'one step',
    llmInstructions: 'Be brief.',
    steps: [{ stepOrder: 1, instructions: 'Say ok' }],
  });
  await deps.services.chainRuns.startRun(org, {
    actionChainId: warmUp.actionChainId,
    payload: {},
    triggerType: 'api',
    startedByUserId: boot.userId,
  });
  await waitFor(async () => (await finishedRuns(warmUp.actionChainId)) >= 1);

  // --- baselines: bare workflow starts, each completed; then the same with one activity each ---------------
  const bareWorkflows = require.resolve('./lib/noop-workflow');
  const noopActivities = { noopActivity: (n: number) => Promise.resolve(n) };
  const bare = await startBareWorker(config.temporal, bareWorkflows, noopActivities);
  /** DELIVERIES starts of `workflowType` on `taskQueue`, CONCURRENCY at a time: starts answered per second. */
  const startBare = async (workflowType: string, taskQueue: string, prefix: string) => {
    const t0 = performance.now();
    await pool(DELIVERIES, CONCURRENCY, async (i) => {
      await client.workflow.start(workflowType, { taskQueue, workflowId: `${prefix}-${i}`, args: [i] });
    });
    return DELIVERIES / ((performance.now() - t0) / 1000);
  };
  const results = async (prefix: string) => {
    for (let i = 0; i < DELIVERIES; i++) await client.workflow.getHandle(`${prefix}-${i}`).result();
  };
  /** Bare starts of `workflowType`, then each result: starts/s answered and done/s. */
  const bareArm = async (workflowType: string, label: string) => {
    const prefix = `bench-${workflowType}-${randomBytes(4).toString('hex')}`;
    const cpu = account();
    cpu.start();
    const t0 = performance.now();
    const startRate = await startBare(workflowType, bare.taskQueue, prefix);
    await results(prefix);
    const seconds = (performance.now() - t0) / 1000;
    cpu.stop();
    const rate = DELIVERIES / seconds;
    console.log(
      `${label} starts: ${startRate.toFixed(1)}/s answered; ${rate.toFixed(1)}/s all completed ` +
        `(${DELIVERIES} in ${seconds.toFixed(1)} s)`,
    );
    console.log(cpuLine(cpu, label));
    return { startRate, rate };
  };
  const { startRate: bareStartRate, rate: bareRate } = await bareArm('bareNoopWorkflow', 'bare workflow');
  const withActivity = await bareArm('bareActivityWorkflow', 'bare workflow with one activity');

  // --- reference: the same one-step chain run directly through the service, each completed ---------------
  const direct = await deps.services.chains.create(ctx, {
    name: 'Bench direct',
    description: 'one step',
    llmInstructions: 'Be brief.',
    steps: [{ stepOrder: 1, instructions: 'Say ok to {{input.n}}' }],
  });
  const directCpu = account();
  directCpu.start();
  const directStart = performance.now();
  await pool(DELIVERIES, CONCURRENCY, async (i) => {
    await deps.services.chainRuns.startRun(org, {
      actionChainId: direct.actionChainId,
      payload: { n: String(i) },
      triggerType: 'api',
      startedByUserId: boot.userId,
    });
  });
  await waitFor(async () => (await finishedRuns(direct.actionChainId)) >= DELIVERIES);
  const directSeconds = (performance.now() - directStart) / 1000;
  directCpu.stop();
  const directRate = DELIVERIES / directSeconds;
  console.log(
    `direct chain runs (service startRun, no webhook), all completed: ${directRate.toFixed(1)}/s ` +
      `(${DELIVERIES} in ${directSeconds.toFixed(1)} s)`,
  );
  console.log(cpuLine(directCpu, 'direct chain run'));

  // --- service: webhook deliveries over HTTP --------------------------------------------------------------
  const url = `http://127.0.0.1:${api.port}/orgs/${org}/webhooks/${webhook.webhookId}/execute`;
  /** DELIVERIES POSTs, CONCURRENCY at a time, each with its own event id; how many were refused, and seconds. */
  const deliver = async (eventPrefix: string) => {
    let refused = 0;
    const t0 = performance.now();
    await pool(DELIVERIES, CONCURRENCY, async (i) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `${eventPrefix}-${i}` },
        body: JSON.stringify({ n: i }),
      });
      if (res.status !== 200) refused++;
      await res.arrayBuffer();
    });
    return { refused, seconds: (performance.now() - t0) / 1000 };
  };
  const deliveryCpu = account();
  deliveryCpu.start();
  const deliveryStart = performance.now();
  const { refused, seconds: acceptSeconds } = await deliver('evt');
  const runs = () =>
    deps.repos
      .tenant(org)
      .chainRuns.list(chain.actionChainId, { limit: 1, offset: 0, orderBy: 'created_at', descending: false });
  await waitFor(async () => {
    const { total } = await runs();
    return total >= DELIVERIES - refused;
  });
  await waitFor(async () => (await finishedRuns(chain.actionChainId)) >= DELIVERIES - refused);
  const completeSeconds = (performance.now() - deliveryStart) / 1000;
  deliveryCpu.stop();
  const { total } = await runs();
  const rate = (DELIVERIES - refused) / completeSeconds;
  const acceptRate = (DELIVERIES - refused) / acceptSeconds;
  console.log(
    `webhook deliveries: ${acceptRate.toFixed(1)}/s accepted (${refused} refused); ` +
      `${rate.toFixed(1)}/s with every execution completed (${DELIVERIES} in ${completeSeconds.toFixed(1)} s)`,
  );
  console.log(cpuLine(deliveryCpu, 'delivery'));
  console.log(
    `chain runs: ${total} for ${DELIVERIES - refused} accepted deliveries (lost: ${DELIVERIES - refused - total})`,
  );
  console.log(
    `ratio completed deliveries / bare workflows completed: ${(rate / bareRate).toFixed(2)} (target >= 0.8)`,
  );
  console.log(
    `ratio accepted deliveries / bare starts answered: ${(acceptRate / bareStartRate).toFixed(2)} (a burst ` +
      'taken in; the executions it leaves queued then complete at the rate above)',
  );
  console.log(
    `ratio completed deliveries / direct chain runs: ${(rate / directRate).toFixed(2)} (what the webhook layer costs)`,
  );
  console.log(
    `ratios to bare workflows completed: bare workflow with one activity ${(withActivity.rate / bareRate).toFixed(2)}, ` +
      `direct chain runs ${(directRate / bareRate).toFixed(2)} (what any delivery's execution costs before the ` +
      'webhook layer: at least a workflow and an activity)',
  );
  const peak = (pid: number | undefined) => (pid === undefined ? NaN : procStats(pid).peakRssMb).toFixed(0);
  console.log(`peak RSS (VmHWM): API ${peak(api.child.pid)} MB, worker ${peak(worker.pid)} MB`);

  // --- intake alone: bursts taken in while no worker runs (as when workers are scaled apart from the API) ---
  // Bare starts on a queue no worker polls yet, and deliveries with the service's worker stopped; then workers
  // start and every execution must complete. Only the intake is timed.
  await stopProcess(worker);
  const idleTemporal = { ...config.temporal, taskQueue: `${config.temporal.taskQueue}-idle` };
  const idlePrefix = `bench-idle-${randomBytes(4).toString('hex')}`;
  const bareIntakeCpu = account(false);
  bareIntakeCpu.start();
  const bareIntakeRate = await startBare('bareNoopWorkflow', bareTaskQueue(idleTemporal), idlePrefix);
  bareIntakeCpu.stop();
  const intakeCpu = account(false);
  intakeCpu.start();
  const intake = await deliver('idle');
  intakeCpu.stop();
  const intakeRate = (DELIVERIES - intake.refused) / intake.seconds;
  console.log(
    `\nintake alone (no worker running while the burst is taken in): bare starts ${bareIntakeRate.toFixed(1)}/s ` +
      `answered, deliveries ${intakeRate.toFixed(1)}/s accepted (${intake.refused} refused): ratio ` +
      `${(intakeRate / bareIntakeRate).toFixed(2)}`,
  );
  console.log(cpuLine(bareIntakeCpu, 'bare start taken in'));
  console.log(cpuLine(intakeCpu, 'delivery taken in'));
  worker = startWorkerProcess(serviceEnv);
  const idleBare = await startBareWorker(idleTemporal, bareWorkflows, noopActivities);
  await results(idlePrefix);
  const expected = DELIVERIES - refused + (DELIVERIES - intake.refused);
  await waitFor(async () => (await runs()).total >= expected);
  await waitFor(async () => (await finishedRuns(chain.actionChainId, 2 * DELIVERIES)) >= expected);
  console.log(
    `after workers started: every bare workflow completed; chain runs ${(await runs()).total - total} for ` +
      `${DELIVERIES - intake.refused} deliveries taken in (lost: ${expected - (await runs()).total})`,
  );
  console.log(`load average at end: ${load()}`);

  await idleBare.stop();
  await Promise.all([stopProcess(api.child), stopProcess(worker)]);
  await bare.stop();
  await closeDeps(deps);
  await llm.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
