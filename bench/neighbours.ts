/**
 * Noisy neighbours (issue 38): one organization's chat turns, idle and then while another organization keeps its
 * background bounds full, side by side in one run.
 *
 * - Organization B sends TURNS (30) chat turns one at a time; each is timed from its POST to the reply's final
 *   `conversation` event on socket.io, as a chat client sees it. First idle, then under A's load. The histories of
 *   B's turn workflows show where the time went (Temporal's queues or the worker).
 * - Organization A's load, CLIENTS (24) closed-loop clients as they ship from HTTP: executes across WEBHOOKS (10)
 *   webhooks (one one-step chain handler each, at their allowed rate of 600 a minute), chain runs, upload URLs
 *   with their bytes, and chat turns (its own 20-turn limit answers the rest with 429). B's loaded turns start once
 *   A has been refused `backlog_full` (its bounds are full).
 * - Organization C starts one chain run while A's backlog is full: the time until that run is running.
 * - After the load: every execution A had accepted completes (its deliveries' chain runs are counted against the
 *   accepted deliveries, its direct runs and its files too), and A's `429 backlog_full` answers are timed.
 * - Beside each of B's turns, two floors: a workflow running one no-op activity on a queue and worker of its own
 *   (Temporal alone), and one database write and read; their loaded/idle ratios are what no service could beat.
 * - A_MIX (16,4,2,2) is A's clients of each kind per 24: deliveries, chain runs, uploads, turns.
 * Targets: B's loaded p50 ≤ 2× idle, p99 ≤ 5× idle, no turn unanswered; C's run running within 5 s; A's excess
 * refused within 50 ms (p99). The scripted model answers at once. The API and the worker run as they ship, each in
 * its own process (bench/lib/service-processes.ts).
 *   STACK_PORT_OFFSET=500 node bench/run.mjs neighbours
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import mongoose from 'mongoose';
import { io } from 'socket.io-client';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import { startScriptedLlm } from '@test/helpers/llm';
import { startBareWorker } from './lib/bare-worker';
import { medianPhases, phasesOf } from './lib/history-phases';
import { keepAliveAgent, send } from './lib/load';
import { cpuAccount, stackPids } from './lib/proc';
import { startApiProcess, startWorkerProcess, stopProcess } from './lib/service-processes';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const TURNS = num('TURNS', 30);
const CLIENTS = num('CLIENTS', 24);
const WEBHOOKS = num('WEBHOOKS', 10);
const TURN_TIMEOUT_MS = num('TURN_TIMEOUT_MS', 120_000);
/** A's clients of each kind per 24: deliveries, chain runs, uploads, turns. */
const A_MIX = (process.env.A_MIX ?? '16,4,2,2').split(',').map(Number);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const llm = await startScriptedLlm();
  llm.setDefault({ content: '{"ok": true}' });
  const serviceEnv = {
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: llm.apiKey,
    TEMPORAL_TASK_QUEUE: `bench-neighbours-${randomBytes(4).toString('hex')}`,
    METRICS_TOKEN: randomBytes(16).toString('hex'),
  };
  const config = loadConfig({ ...process.env, ...serviceEnv });
  const deps = await createDeps(config, { logger: createLogger('silent') });
  const worker = startWorkerProcess(serviceEnv);
  const api = await startApiProcess(serviceEnv);
  const base = `http://127.0.0.1:${api.port}`;
  // The floors, measured beside each of B's turns: the same shape of Temporal work with nothing of ours in it (a
  // workflow running one no-op activity, on a queue and worker of its own), and one database write and read.
  const bareWorker = await startBareWorker(config.temporal, require.resolve('./lib/noop-workflow'), {
    noopActivity: (n: number) => Promise.resolve(n),
  });
  const mongo = new mongoose.mongo.MongoClient(config.mongodbUri);
  await mongo.connect();
  const pings = mongo.db().collection<{ _id: string; n: number }>('bench_pings');
  let floorN = 0;
  const floors = async () => {
    const i = floorN++;
    const t0 = performance.now();
    await deps.temporal.client.workflow.execute('bareActivityWorkflow', {
      taskQueue: bareWorker.taskQueue,
      workflowId: `bench-neighbours-floor-${randomBytes(4).toString('hex')}-${i}`,
      args: [i],
    });
    const t1 = performance.now();
    await pings.insertOne({ _id: `p${i}-${randomBytes(4).toString('hex')}`, n: i });
    await pings.findOne({ n: i });
    return { temporal: t1 - t0, database: performance.now() - t1 };
  };
  const http = keepAliveAgent(CLIENTS + 8);
  const call = (token: string | null, method: 'GET' | 'POST', path: string, body?: object) =>
    send(base, http, method, path, token ? { Authorization: `Bearer ${token}` } : {}, body);
  const json = async (token: string, method: 'GET' | 'POST', path: string, body?: object) => {
    const res = await call(token, method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body}`);
    return JSON.parse(res.body) as Record<string, unknown>;
  };
  const org = async (name: string) => {
    const boot = await bootstrapOrganization(deps, {
      orgName: name,
      email: `${name.toLowerCase()}-${randomBytes(4).toString('hex')}@example.test`,
      name,
    });
    return {
      id: boot.organizationId,
      token: boot.sessionToken,
      path: (p: string) => `/orgs/${boot.organizationId}${p}`,
    };
  };
  const chainOf = async (o: Awaited<ReturnType<typeof org>>) =>
    (
      await json(o.token, 'POST', o.path('/chains'), {
        name: 'Bench',
        description: 'one step',
        llmInstructions: 'Be brief.',
        steps: [{ stepOrder: 1, instructions: 'Say ok to {{input.n}}' }],
      })
    ).actionChainId as string;
  const agentOf = async (o: Awaited<ReturnType<typeof org>>) =>
    (
      await json(o.token, 'POST', o.path('/agents'), {
        name: 'Helper',
        description: 'bench',
        instructions: 'Be brief.',
        model: 'gpt-4o-mini',
      })
    ).id as string;

  const [a, b, c] = [await org('Busy'), await org('Quiet'), await org('Second')];
  const chainA = await chainOf(a);
  const hooks: string[] = [];
  for (let i = 0; i < WEBHOOKS; i++) {
    const hook = (await json(a.token, 'POST', a.path('/webhooks'), { name: `Hook ${i}` }))
      .webhookId as string;
    await json(a.token, 'POST', a.path(`/webhooks/${hook}/handlers`), {
      handlerType: 'action-chain',
      actionChainId: chainA,
      instructions: 'Run',
      inputMapping: { n: '{{body.n}}' },
    });
    hooks.push(hook);
  }
  const kbA = (
    await json(a.token, 'POST', a.path('/knowledgebases'), {
      title: 'Uploads',
      llmDescription: 'bench',
      type: 'ORGANIZATION',
    })
  ).knowledgeBaseId as string;
  const [agentA, agentB, chainC] = [await agentOf(a), await agentOf(b), await chainOf(c)];

  // B's chat client: one socket; a reply's final event may arrive before its POST has answered.
  const socket = io(base, { transports: ['websocket'], auth: { token: b.token, organizationId: b.id } });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  const finals = new Map<string, () => void>();
  const early = new Set<string>();
  socket.on('conversation', (e: { type: string; requestId: string }) => {
    if (e.type !== 'message' && e.type !== 'error') return;
    const done = finals.get(e.requestId);
    if (done) done();
    else early.add(e.requestId);
  });
  /** One of B's turns, POST to the reply's final event; undefined when it did not come within TURN_TIMEOUT_MS. */
  const turnB = async (i: number) => {
    const t0 = performance.now();
    const { requestId } = await json(b.token, 'POST', b.path('/conversations'), {
      agentId: agentB,
      message: `turn ${i}`,
    });
    const id = String(requestId);
    const answered = early.has(id)
      ? true
      : await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), TURN_TIMEOUT_MS);
          finals.set(id, () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
    finals.delete(id);
    return answered ? performance.now() - t0 : undefined;
  };
  /** Start → close of B's turn workflows started in [from, to), and where their time went. */
  const workflowTimes = async (from: number, to: number) => {
    const query = `WorkflowType = 'agentTurnWorkflow' AND OrganizationId = '${b.id}'`;
    const took: number[] = [];
    const phases = [];
    for await (const w of deps.temporal.client.workflow.list({ query })) {
      const start = w.startTime.getTime();
      if (start >= from && start < to && w.closeTime) {
        took.push(w.closeTime.getTime() - start);
        phases.push(await phasesOf(deps.temporal.client, w.workflowId));
      }
    }
    return { took, phases: medianPhases(phases) };
  };
  const turnsOfB = async (label: string) => {
    const from = Date.now();
    const cpu = cpuAccount({
      bench: process.pid,
      API: api.child.pid,
      worker: worker.pid,
      ...stackPids(config),
    });
    cpu.start();
    const wall = performance.now();
    const times: number[] = [];
    const floor = { temporal: [] as number[], database: [] as number[] };
    let unanswered = 0;
    for (let i = 0; i < TURNS; i++) {
      const t = await turnB(i);
      if (t === undefined) unanswered++;
      else times.push(t);
      const f = await floors();
      floor.temporal.push(f.temporal);
      floor.database.push(f.database);
    }
    cpu.stop();
    const seconds = (performance.now() - wall) / 1000;
    await sleep(2000); // visibility catches up
    const { took, phases } = await workflowTimes(from, Date.now());
    console.log(
      `B's turns ${label}: p50 ${ms(pct(times, 0.5))}, p90 ${ms(pct(times, 0.9))}, p99 ${ms(pct(times, 0.99))}, unanswered ${unanswered}; ` +
        `their workflows start → close p50 ${ms(pct(took, 0.5))}, p99 ${ms(pct(took, 0.99))}`,
    );
    console.log(`  where a turn workflow's time went (medians): ${phases}`);
    console.log(
      `  floors beside them: a workflow with one no-op activity p50 ${ms(pct(floor.temporal, 0.5))}, p99 ${ms(pct(floor.temporal, 0.99))}; ` +
        `a database write and read p50 ${ms(pct(floor.database, 0.5))}, p99 ${ms(pct(floor.database, 0.99))}`,
    );
    const shares = Object.entries(cpu.total).map(([name, cpuMs]) => `${name} ${(cpuMs / 10 / seconds) | 0}%`);
    console.log(`  CPU meanwhile (of one core): ${shares.join(', ')}`);
    return { times, unanswered, floor };
  };

  // Warm-up: the worker polls once it has bundled its workflows.
  for (let i = 0; i < 5; i++) await turnB(-i);
  const idle = await turnsOfB('idle');

  // --- A's load --------------------------------------------------------------------------------------------
  const tally = { delivered: 0, runs: 0, files: 0, turns: 0, backlogFull: 0, otherRefused: 0, errors: 0 };
  const refusedMs: number[] = [];
  const refusedBy: Record<string, number[]> = {};
  let loading = true;
  let n = 0;
  const client = async (kind: 'delivery' | 'run' | 'upload' | 'turn', k: number) => {
    while (loading) {
      const i = n++;
      const t0 = performance.now();
      try {
        let res;
        if (kind === 'delivery')
          res = await call(null, 'POST', a.path(`/webhooks/${hooks[(k + i) % hooks.length]}/execute`), {
            n: i,
          });
        else if (kind === 'run')
          res = await call(a.token, 'POST', a.path(`/chains/${chainA}/run`), { payload: { n: i } });
        else if (kind === 'turn')
          res = await call(a.token, 'POST', a.path('/conversations'), {
            agentId: agentA,
            message: `load ${i}`,
          });
        else {
          res = await call(a.token, 'POST', a.path(`/knowledgebases/${kbA}/files/upload-url`), {
            fileName: `f${i}.txt`,
            contentType: 'text/plain',
          });
          if (res.status === 201) {
            const { uploadUrl } = JSON.parse(res.body) as { uploadUrl: string };
            await fetch(uploadUrl, {
              method: 'PUT',
              body: `file ${i}`,
              headers: { 'Content-Type': 'text/plain' },
            });
          }
        }
        const elapsed = performance.now() - t0;
        if (res.status < 300)
          tally[({ delivery: 'delivered', run: 'runs', upload: 'files', turn: 'turns' } as const)[kind]]++;
        else if (res.status === 429 && res.body.includes('backlog_full')) {
          tally.backlogFull++;
          refusedMs.push(elapsed);
          (refusedBy[kind] ??= []).push(elapsed);
          await sleep(200); // a sender backs off a little (Retry-After is longer)
        } else if (res.status === 429) {
          tally.otherRefused++;
          await sleep(200);
        } else tally.errors++;
      } catch {
        tally.errors++;
      }
    }
  };
  const kinds = (['delivery', 'run', 'upload', 'turn'] as const).flatMap((kind, j) =>
    Array.from({ length: A_MIX[j]! * (CLIENTS / 24) }, (_, k) => client(kind, k)),
  );
  const loadStarted = performance.now();
  while (tally.backlogFull === 0 && performance.now() - loadStarted < 120_000) await sleep(100);
  console.log(
    `A's bounds full after ${ms(performance.now() - loadStarted)}: ${JSON.stringify(await deps.services.admission.usage(a.id))}`,
  );

  // C's first run while A's backlog is full.
  const cStart = performance.now();
  const { runId } = await json(c.token, 'POST', c.path(`/chains/${chainC}/run`), { payload: { n: 0 } });
  let cRunning = NaN;
  while (performance.now() - cStart < 120_000) {
    const run = await deps.repos.tenant(c.id).chainRuns.get(String(runId));
    if (run && run.status !== 'pending') {
      cRunning = performance.now() - cStart;
      break;
    }
    await sleep(20);
  }
  console.log(`C's first run running after ${ms(cRunning)} while A's backlog is full`);

  const loaded = await turnsOfB("under A's load");
  loading = false;
  await Promise.all(kinds);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  console.log(`A's load for ${loadSeconds.toFixed(0)} s: ${JSON.stringify(tally)}`);

  // --- every execution A had accepted completes --------------------------------------------------------------
  const drainStart = performance.now();
  const finished = async () => {
    const tenant = deps.repos.tenant(a.id);
    const runs = await tenant.chainRuns.list(chainA, {
      limit: 1,
      offset: 0,
      orderBy: 'created_at',
      descending: false,
    });
    const usage = await deps.services.admission.usage(a.id);
    const open = Object.values(usage).reduce((s, u) => s + u.unfinished, 0);
    return { runs: runs.total, open };
  };
  let state = await finished();
  while (state.open > 0 && performance.now() - drainStart < 900_000) {
    await sleep(1000);
    state = await finished();
  }
  const expectedRuns = tally.delivered + tally.runs;
  const runDocs = [];
  for (let offset = 0; offset < state.runs; offset += 500)
    runDocs.push(
      ...(
        await deps.repos
          .tenant(a.id)
          .chainRuns.list(chainA, { limit: 500, offset, orderBy: 'created_at', descending: false })
      ).items,
    );
  const ended = runDocs.filter((r) => r.status === 'success' || r.status === 'failed').length;
  console.log(
    `A after the load: ${state.open} executions unfinished after ${ms(performance.now() - drainStart)}; ` +
      `chain runs ${runDocs.length} (accepted deliveries + runs: ${expectedRuns}), ended ${ended}`,
  );

  const ratio50 = pct(loaded.times, 0.5) / pct(idle.times, 0.5);
  const ratio99 = pct(loaded.times, 0.99) / pct(idle.times, 0.99);
  console.log('\ntarget                                   measured');
  console.log(`B p50 loaded / idle ≤ 2                 ${ratio50.toFixed(2)}`);
  console.log(`B p99 loaded / idle ≤ 5                 ${ratio99.toFixed(2)}`);
  console.log(`B turns unanswered = 0                  ${loaded.unanswered}`);
  const floorRatio = (k: 'temporal' | 'database', q: number) =>
    (pct(loaded.floor[k], q) / pct(idle.floor[k], q)).toFixed(2);
  console.log(
    `  the same ratios of the floors: Temporal alone p50 ${floorRatio('temporal', 0.5)}, p99 ${floorRatio('temporal', 0.99)}; ` +
      `the database alone p50 ${floorRatio('database', 0.5)}, p99 ${floorRatio('database', 0.99)}`,
  );
  console.log(`C's first run running ≤ 5000 ms         ${ms(cRunning)}`);
  console.log(
    `A's backlog_full p99 ≤ 50 ms            ${ms(pct(refusedMs, 0.99))} (p50 ${ms(pct(refusedMs, 0.5))}, ${refusedMs.length} refused)`,
  );
  // The same refusals as the API timed them (its histogram), apart from this process's own event loop.
  const metrics = await send(base, http, 'GET', '/metrics', {
    Authorization: `Bearer ${serviceEnv.METRICS_TOKEN}`,
  });
  const bucket = (le: string) =>
    metrics.body
      .split('\n')
      .filter((l) => l.startsWith('http_request_duration_seconds_bucket{') && l.includes('status_code="429"'))
      .filter((l) => l.includes(`le="${le}"`))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  console.log(
    `  as the API timed its 429 answers: ${bucket('0.05')} of ${bucket('+Inf')} within 50 ms, ${bucket('0.1')} within 100 ms`,
  );
  for (const [kind, times] of Object.entries(refusedBy))
    console.log(`  ${kind}: p50 ${ms(pct(times, 0.5))}, p99 ${ms(pct(times, 0.99))} (${times.length})`);
  console.log(
    `A's accepted work all ended             ${state.open === 0 && runDocs.length === expectedRuns && ended === expectedRuns}`,
  );

  socket.close();
  await bareWorker.stop();
  await mongo.close();
  await stopProcess(worker);
  await stopProcess(api.child);
  await closeDeps(deps);
  await llm.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
