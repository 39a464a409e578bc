/**
 * `npm run soak -- --minutes N`: a steady mix from two organizations for N minutes against the API and the worker
 * as they ship (dist/, each in its own process: bench/lib/service-processes.ts), then the invariants:
 *
 * - every accepted request finished exactly once: each turn one final event on socket.io whose streamed text is
 *   the stored reply; each chain run (with a fan-out step), webhook delivery and its handler run, schedule fire and
 *   its run, and app bridge run in a final state, once; each uploaded file READY; each table write readable;
 * - no 5xx answer to any request the soak made;
 * - the RSS of the API and of the worker flat after the warm-up (the first 20% of the run): the least-squares
 *   slope of samples taken every few seconds, in MB per 10 minutes, at most SOAK_MAX_RSS_SLOPE (MB / 10 min).
 *
 * The mix, per organization: closed-loop clients (SOAK_CLIENTS: turns, chain runs, deliveries, files, table
 * writes, app bridge calls; default 2,1,1,1,1,1) each pausing SOAK_PAUSE_MS (200) between operations, and a
 * schedule fired now every SOAK_FIRE_EVERY_MS (15 s) besides its every-minute cron. Each operation is followed
 * to its final state before the client's next one, so the work in flight stays bounded. Before the clock, the same
 * mix at twice the clients until SOAK_PRIME_OPERATIONS (2,000) operations that run workflows (all but table writes)
 * have completed, for SOAK_PRIME_SECONDS (60) at least and SOAK_PRIME_MAX_SECONDS (300) at most.
 * Started by bench/run.mjs (`npm run soak`, a throwaway stack) or by stack/test.mjs in CI (docs/testing.md).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps, type Deps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { freePort } from '@test/helpers/api-process';
import { startScriptedLlm } from '@test/helpers/llm';
import { startApiProcess, startWorkerProcess, stopProcess } from './lib/service-processes';
import { checkOrg, type Invariant } from './soak/checks';
import { SoakHttp } from './soak/http';
import { Ledger, type Kind } from './soak/ledger';
import { scriptModel } from './soak/model';
import { operationsOf, type Operations } from './soak/operations';
import { connectChat } from './soak/realtime';
import { failureLines, invariantLines, kindTable, perMinuteLines, rssTable } from './soak/report';
import { rssFigures, sampleRss, type Sampled } from './soak/rss';
import { setUpOrg } from './soak/setup';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const MINUTES = Number(arg('minutes') ?? process.env.SOAK_MINUTES ?? 3);
/**
 * MB per 10 minutes each process's RSS may grow after the warm-up: API, worker (docs/testing.md#the-soak). The
 * worker's RSS still climbs a little after its first few thousand workflows, a larger part of a short run: under
 * 10 minutes it is held to 100.
 */
const [MAX_SLOPE_API, MAX_SLOPE_WORKER] = (
  process.env.SOAK_MAX_RSS_SLOPE ?? (MINUTES < 10 ? '40,100' : '40,40')
)
  .split(',')
  .map(Number);
const MAX_SLOPE: Record<string, number> = { API: MAX_SLOPE_API!, worker: MAX_SLOPE_WORKER! };
const PAUSE_MS = num('SOAK_PAUSE_MS', 200);
const FIRE_EVERY_MS = num('SOAK_FIRE_EVERY_MS', 15_000);
const RSS_EVERY_MS = num('SOAK_RSS_EVERY_MS', 3000);
const CLIENTS = (process.env.SOAK_CLIENTS ?? '2,1,1,1,1,1').split(',').map(Number);
const WARM_UP = 0.2;
const PRIME_SECONDS = num('SOAK_PRIME_SECONDS', 60);
const PRIME_MAX_SECONDS = num('SOAK_PRIME_MAX_SECONDS', 300);
const PRIME_OPERATIONS = num('SOAK_PRIME_OPERATIONS', 2000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => console.log(`[soak] ${line}`);

async function main() {
  if (!(MINUTES > 0)) throw new Error('--minutes must be a positive number');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const llm = await startScriptedLlm();
  scriptModel(llm);
  const serviceEnv = {
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: llm.apiKey,
    TEMPORAL_TASK_QUEUE: `soak-${randomBytes(4).toString('hex')}`,
    // An hour of model calls costs more than an organization's starting credits.
    CREDITS_STARTING_BALANCE: '1000000000',
    // the used heap beside the RSS (reported, not judged): the worker's /metrics on a port of its own
    METRICS_TOKEN: randomBytes(16).toString('hex'),
    WORKER_METRICS_PORT: String(await freePort()),
  };
  const config = loadConfig({ ...process.env, ...serviceEnv });
  const deps = await createDeps(config, { logger: createLogger('silent') });
  const worker = startWorkerProcess(serviceEnv);
  const api = await startApiProcess(serviceEnv);
  const base = `http://127.0.0.1:${api.port}`;
  const http = new SoakHttp(base);
  log(`API on ${base}, worker on task queue ${serviceEnv.TEMPORAL_TASK_QUEUE}`);
  const exited: string[] = [];
  for (const [name, child] of [
    ['API', api.child],
    ['worker', worker],
  ] as const)
    child.once('exit', (code, signal) => exited.push(`${name} exited (${code ?? signal})`));
  try {
    const metrics = (url: string) => ({ url: `${url}/metrics`, token: serviceEnv.METRICS_TOKEN });
    const processes = {
      API: { pid: api.child.pid!, metrics: metrics(base) },
      worker: { pid: worker.pid!, metrics: metrics(`http://127.0.0.1:${serviceEnv.WORKER_METRICS_PORT}`) },
    };
    return await soak({ deps, http, base, processes, exited });
  } finally {
    await Promise.all([stopProcess(api.child), stopProcess(worker)]);
    await closeDeps(deps);
    await llm.close();
  }
}

async function soak({
  deps,
  http,
  base,
  processes,
  exited,
}: {
  deps: Deps;
  http: SoakHttp;
  base: string;
  processes: Record<string, Sampled>;
  exited: string[];
}) {
  log('setting up two organizations');
  const orgs = [await setUpOrg(deps, http, 'Soak A'), await setUpOrg(deps, http, 'Soak B')];
  const chats = await Promise.all(orgs.map((o) => connectChat(base, o.orgId, o.key)));
  const ops = orgs.map((o, i) => operationsOf(deps, http, o, chats[i]!));
  const ledger = new Ledger();
  const kinds: Array<[Kind, (o: Operations) => (accept: () => void) => Promise<void>]> = [
    ['turn', (o) => o.turn],
    ['chain run', (o) => o.chainRun],
    ['webhook delivery', (o) => o.delivery],
    ['file', (o) => o.file],
    ['table write', (o) => o.tableWrite],
    ['app bridge', (o) => o.appBridge],
  ];
  /** The mix until `over()`: `factor` times CLIENTS closed-loop clients per organization, and the schedule fires. */
  const mix = (over: () => boolean, factor: number) => {
    const loop = async (kind: Kind, op: (accept: () => void) => Promise<void>, pauseMs: number) => {
      while (!over()) {
        await ledger.run(kind, op);
        await sleep(pauseMs);
      }
    };
    return Promise.all(
      ops.flatMap((o) => [
        ...kinds.flatMap(([kind, pick], k) =>
          Array.from({ length: (CLIENTS[k] ?? 1) * factor }, () => loop(kind, pick(o), PAUSE_MS)),
        ),
        loop('schedule fire', o.scheduleFire, FIRE_EVERY_MS),
      ]),
    );
  };
  // Before the clock, the mix at twice the clients: the worker bundles its workflows, loads the embedding model and
  // grows its native memory (threads, arenas) to what this load needs. That growth follows the workflows it has
  // run, not the time: priming is counted in operations, so a slower machine primes longer instead of measuring
  // the rest of its climb. What it accepts is checked like the rest.
  log(
    `priming at twice the clients: ${PRIME_OPERATIONS} operations that run workflows, ${PRIME_SECONDS}–${PRIME_MAX_SECONDS} s`,
  );
  const primeStart = Date.now();
  const primed = () => {
    const s = (Date.now() - primeStart) / 1000;
    return (
      s >= PRIME_MAX_SECONDS || (s >= PRIME_SECONDS && ledger.completedRunningWorkflows() >= PRIME_OPERATIONS)
    );
  };
  await mix(primed, 2);
  log(
    `primed in ${Math.round((Date.now() - primeStart) / 1000)} s: ${ledger.completedRunningWorkflows()} operations that run workflows`,
  );

  const durationMs = MINUTES * 60_000;
  log(
    `mix for ${MINUTES} min: clients per organization ${CLIENTS.join(',')} (turn, run, delivery, file, table, app)`,
  );
  const rss = sampleRss(processes, RSS_EVERY_MS);
  const end = Date.now() + durationMs;
  const clients = mix(() => Date.now() >= end, 1);
  const progress = setInterval(() => {
    const done = [...ledger.stats.values()].reduce((n, s) => n + s.completed, 0);
    const rssNow = Object.entries(rss.series)
      .map(([name, s]) => `${name} ${s[s.length - 1]?.mb.toFixed(0)} MB`)
      .join(', ');
    log(
      `${Math.round((durationMs - (end - Date.now())) / 1000)} s: ${done} completed, ${ledger.failed} failed; RSS ${rssNow}`,
    );
  }, 30_000);
  await clients;
  clearInterval(progress);
  rss.stop();

  log('mix over; checking what was accepted');
  // A reply sent twice would arrive within moments of the first.
  await sleep(3000);
  const invariants: Invariant[] = [];
  for (const [i, o] of orgs.entries())
    invariants.push(...(await checkOrg(deps, http, o, ops[i]!.owed, chats[i]!, 120_000)));
  for (const o of orgs) await http.call('DELETE', o.path(`/schedules/${o.triggerId}`), o.key);

  const warmUpSeconds = (durationMs / 1000) * WARM_UP;
  if (process.env.SOAK_SERIES_FILE) writeFileSync(process.env.SOAK_SERIES_FILE, JSON.stringify(rss.series));
  const figures = Object.fromEntries(
    Object.entries(rss.series).map(([name, s]) => [name, rssFigures(s, warmUpSeconds)]),
  );
  invariants.push(
    {
      name: 'no 5xx answer',
      ok: http.count5xx === 0 && http.networkErrors === 0,
      detail: `answers ${JSON.stringify(http.statuses)}; ${http.networkErrors} without an answer${http.serverErrors.length ? `; ${http.serverErrors.join(' | ')}` : ''}`,
    },
    {
      name: 'no operation failed',
      ok: ledger.failed === 0,
      detail: `${ledger.failed} failed`,
    },
    {
      name: 'the API and the worker ran throughout',
      ok: exited.length === 0,
      detail: exited.join(', ') || 'both up',
    },
    ...Object.entries(figures).map(([name, f]) => ({
      name: `${name} RSS flat after warm-up`,
      ok: f.samples >= 2 && f.slopeMbPer10Min <= MAX_SLOPE[name]!,
      detail: `slope ${f.slopeMbPer10Min.toFixed(1)} MB / 10 min over ${f.samples} samples, at most ${MAX_SLOPE[name]}`,
    })),
  );

  console.log(`\nsoak: ${MINUTES} min, two organizations, warm-up ${warmUpSeconds.toFixed(0)} s\n`);
  console.log(kindTable(ledger));
  const failures = failureLines(ledger);
  if (failures.length) console.log(['\nfirst failures:', ...failures].join('\n'));
  console.log(`\n${rssTable(figures, MAX_SLOPE)}\n`);
  console.log(['RSS per minute (median):', ...perMinuteLines(rss.series)].join('\n'));
  console.log(['invariants:', ...invariantLines(invariants)].join('\n'));
  const broken = invariants.filter((i) => !i.ok).length;
  console.log(broken === 0 ? '\nsoak: every invariant holds' : `\nsoak: ${broken} invariant(s) broken`);

  for (const chat of chats) chat.close();
  return broken === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
