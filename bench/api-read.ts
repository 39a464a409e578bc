/**
 * Read throughput of the API against a bare baseline: GET /orgs/{org} and GET /orgs/{org}/users with an
 * API key, CONCURRENCY closed-loop keep-alive clients (default 32), DURATION_SECONDS per server and
 * endpoint (default 10, measured in ROUNDS alternating slices after WARMUP_SECONDS of warm-up each).
 *
 * The API runs as `npm start` runs it: `node <API_NODE_FLAGS> dist/api/server.js` with API_ENV (stack/launch.mjs;
 * bench/run.mjs builds dist/ first), no loader. The baseline (bench/lib/read-baseline.ts: bare Express + the
 * bundled MongoDB driver, same auth lookups, same documents) runs in a child of its own
 * (bench/lib/baseline-server.ts). So the load generator never shares an event loop with a server, and each
 * server's CPU and RSS are its own, both read from /proc.
 * Needs the stack env (MONGODB_URI, JWT_SECRET, …): run it through `node bench/run.mjs api-read`.
 * Other knobs: MEMBERS (default 50), BENCH_LOG_LEVEL (API log level, default silent; output is discarded),
 * PROFILE=1 (write a V8 CPU profile of each server to .stack/bench-profiles), ONLY (one endpoint's label),
 * BASELINE_NODE_FLAGS (V8 flags of the baseline process; default none: node's defaults).
 * BASELINE_CHECKOUT=<path> makes the baseline another checkout's API, built there (`npm run build`) and run as this
 * one's is: the same rounds then compare two versions of the service (a change's cost, within one run, so the
 * machine's drift between runs does not count).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import { procStats } from './lib/proc';
import { cpuProfileFlags, startApiProcess, stopProcess } from './lib/service-processes';
import {
  get,
  keepAliveAgent,
  merge,
  runLoad,
  summarize,
  table,
  type LoadResult,
  type LoadTarget,
} from './lib/load';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const DURATION_SECONDS = num('DURATION_SECONDS', 10);
const CONCURRENCY = num('CONCURRENCY', 32);
const WARMUP_SECONDS = num('WARMUP_SECONDS', 2);
const ROUNDS = num('ROUNDS', 4);
const MEMBERS = num('MEMBERS', 50);
const MODES = ['api', 'baseline'] as const;
type ServerMode = (typeof MODES)[number];
/** ONLY='GET /orgs/{org}' measures one endpoint (e.g. with PROFILE=1, to profile it alone). */
const ONLY = process.env.ONLY;

/** The baseline in its own child (with the tsx loader this process runs with); resolves with its port. */
function startBaseline(): Promise<{ child: ChildProcess; port: number }> {
  // The baseline runs on node's defaults, as a bare server would ship: given the service's flags, it lost 10–20%
  // of its requests per second (--heap-growing-percent=40 collects its small heap far more often), which
  // flattered the ratio.
  const flags = (process.env.BASELINE_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = fork(join(__dirname, 'lib', 'baseline-server.ts'), [], {
    execArgv: [...process.execArgv, ...flags, ...cpuProfileFlags()],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve({ child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`baseline exited (${code}) before it was ready`)));
  });
}

async function startServer(mode: ServerMode) {
  const other = process.env.BASELINE_CHECKOUT;
  const { child, port } =
    mode === 'api'
      ? await startApiProcess()
      : other
        ? await startApiProcess({}, other)
        : await startBaseline();
  const target: LoadTarget = {
    name: mode,
    baseUrl: `http://127.0.0.1:${port}`,
    agent: keepAliveAgent(CONCURRENCY),
  };
  return { child, target, readyRssMb: procStats(child.pid!).rssMb };
}

async function seed() {
  const deps = await createDeps(loadConfig(), { logger: createLogger('silent') });
  const tag = Date.now().toString(36);
  const boot = await bootstrapOrganization(deps, {
    orgName: 'Bench Org',
    email: `owner-${tag}@bench.test`,
    name: 'Bench Owner',
  });
  const members = deps.repos.tenant(boot.organizationId).members;
  for (let i = 1; i < MEMBERS; i++) {
    const user = await deps.repos.accounts.create({
      email: `member${i}-${tag}@bench.test`,
      name: `Member ${i}`,
    });
    await members.add(user, i % 5 === 0 ? 'admin' : 'chat');
  }
  await closeDeps(deps);
  return boot;
}

async function main() {
  const boot = await seed();
  const headers = { Authorization: `Bearer ${boot.apiKey}`, Accept: 'application/json' };
  const servers = { api: await startServer('api'), baseline: await startServer('baseline') };
  const endpoints = [
    { label: 'GET /orgs/{org}', path: `/orgs/${boot.organizationId}` },
    { label: 'GET /orgs/{org}/users', path: `/orgs/${boot.organizationId}/users` },
  ].filter((e) => !ONLY || e.label === ONLY);
  const rows: string[][] = [];
  const ratios: string[] = [];
  for (const { label, path } of endpoints) {
    // Same bodies from both, or the comparison means nothing.
    const [a, b] = await Promise.all([
      get(servers.api.target, path, headers),
      get(servers.baseline.target, path, headers),
    ]);
    if (a.status !== 200 || b.status !== 200 || !isDeepStrictEqual(JSON.parse(a.body), JSON.parse(b.body))) {
      throw new Error(`${label}: api ${a.status} and baseline ${b.status} disagree:\n${a.body}\n${b.body}`);
    }
    const results: Record<ServerMode, LoadResult[]> = { api: [], baseline: [] };
    const cpuMs: Record<ServerMode, number> = { api: 0, baseline: 0 };
    for (const mode of MODES) {
      await runLoad(servers[mode].target, path, headers, CONCURRENCY, WARMUP_SECONDS * 1000);
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which server goes first, so drift (caches, DB growth) does not favour one side.
      const order: ServerMode[] = round % 2 === 0 ? ['api', 'baseline'] : ['baseline', 'api'];
      for (const mode of order) {
        const before = procStats(servers[mode].child.pid!).cpuMs;
        results[mode].push(
          await runLoad(servers[mode].target, path, headers, CONCURRENCY, (DURATION_SECONDS * 1000) / ROUNDS),
        );
        cpuMs[mode] += procStats(servers[mode].child.pid!).cpuMs - before;
      }
    }
    const s = { api: summarize(merge(results.api)), baseline: summarize(merge(results.baseline)) };
    for (const mode of MODES) {
      const r = s[mode];
      const cpuPerReq = (cpuMs[mode] * 1000) / r.requests;
      rows.push([
        label,
        mode,
        r.rps.toFixed(0),
        r.p50.toFixed(2),
        r.p99.toFixed(2),
        cpuPerReq.toFixed(0),
        `${r.errors}`,
      ]);
    }
    ratios.push(`${label}: api/baseline req/s = ${(s.api.rps / s.baseline.rps).toFixed(2)}`);
  }
  const peakRssMb = {
    api: procStats(servers.api.child.pid!).peakRssMb,
    baseline: procStats(servers.baseline.child.pid!).peakRssMb,
  };
  await Promise.all(MODES.map((mode) => stopProcess(servers[mode].child)));
  console.log(
    `\napi-read: ${CONCURRENCY} clients, ${DURATION_SECONDS}s per server and endpoint (${ROUNDS} alternating rounds, ` +
      `${WARMUP_SECONDS}s warm-up), ${MEMBERS} members, node ${process.version}; baseline: ` +
      `${process.env.BASELINE_CHECKOUT ? `the API of ${process.env.BASELINE_CHECKOUT}` : 'the bare server'}\n`,
  );
  console.log(
    table(['endpoint', 'server', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'errors'], rows),
  );
  console.log(`\n${ratios.join('\n')}`);
  for (const mode of MODES) {
    console.log(
      `${mode} process RSS: ${servers[mode].readyRssMb.toFixed(0)} MB when ready, ` +
        `peak ${peakRssMb[mode].toFixed(0)} MB (VmHWM)`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
