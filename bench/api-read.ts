/**
 * Read throughput of the API against a bare baseline: GET /orgs/{org} and GET /orgs/{org}/users with an
 * API key, CONCURRENCY closed-loop keep-alive clients (default 32), DURATION_SECONDS per server and
 * endpoint (default 10, measured in ROUNDS alternating slices after WARMUP_SECONDS of warm-up each).
 *
 * The real app (createDeps + createApp, from the build in dist/ as `npm start` runs it; bench/run.mjs builds
 * it first) and the baseline (bench/lib/read-baseline.ts: bare Express + the
 * bundled MongoDB driver, same auth lookups, same documents) each run in their own child process, so the
 * load generator never shares an event loop with a server and each server's RSS and CPU are its own
 * (bench/lib/bench-server.ts).
 * Needs the stack env (MONGODB_URI, JWT_SECRET, …): run it through `node bench/run.mjs api-read`.
 * Other knobs: MEMBERS (default 50), BENCH_LOG_LEVEL (API log level, default silent; output is discarded),
 * PROFILE=1 (write a V8 CPU profile of each server to .stack/bench-profiles), ONLY (one endpoint's label),
 * BASELINE_NODE_FLAGS (V8 flags of the baseline process; default none: node's defaults).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import type { FromChild, ServerMode, ToChild } from './lib/bench-server';
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
/** ONLY='GET /orgs/{org}' measures one endpoint (e.g. with PROFILE=1, to profile it alone). */
const ONLY = process.env.ONLY;

/** Waits for the child's next message of `type`, after sending `request` when given. */
function ask<T extends FromChild['type']>(
  child: ChildProcess,
  type: T,
  request?: ToChild,
): Promise<Extract<FromChild, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: FromChild) => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as Extract<FromChild, { type: T }>);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`bench server exited (${code}) before '${type}'`));
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (request) child.send(request);
  });
}

// The V8 flags the service's processes run with (stack/start.mjs, Dockerfile, docker-compose.yml, deploy/). The
// baseline runs on node's defaults, as a bare server would ship: given the service's flags, it lost 10–20% of its
// requests per second (--heap-growing-percent=40 collects its small heap far more often), which flattered the ratio.
const NODE_FLAGS: Record<ServerMode, string[]> = {
  api: ['--max-semi-space-size=16', '--heap-growing-percent=40'],
  baseline: (process.env.BASELINE_NODE_FLAGS ?? '').split(' ').filter(Boolean),
};

/** Forks bench/lib/bench-server.ts with the same loader flags (tsx) this process runs with, and the mode's. */
async function startChild(mode: ServerMode) {
  const profile = process.env.PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${join(process.cwd(), '.stack/bench-profiles')}`]
    : [];
  const child = fork(join(__dirname, 'lib', 'bench-server.ts'), [mode], {
    execArgv: [...process.execArgv, ...NODE_FLAGS[mode], ...profile],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const { port, rssMb } = await ask(child, 'ready');
  const target: LoadTarget = {
    name: mode,
    baseUrl: `http://127.0.0.1:${port}`,
    agent: keepAliveAgent(CONCURRENCY),
  };
  return { child, target, readyRssMb: rssMb };
}

async function seed() {
  const deps = await createDeps(loadConfig(), { logger: createLogger('silent') });
  const tag = Date.now().toString(36);
  const boot = await bootstrapOrganization(deps.repos, deps.tokens, {
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
  const servers = { api: await startChild('api'), baseline: await startChild('baseline') };
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
        const before = await ask(servers[mode].child, 'cpu', { type: 'cpu' });
        results[mode].push(
          await runLoad(servers[mode].target, path, headers, CONCURRENCY, (DURATION_SECONDS * 1000) / ROUNDS),
        );
        const after = await ask(servers[mode].child, 'cpu', { type: 'cpu' });
        cpuMs[mode] += after.userMs + after.systemMs - before.userMs - before.systemMs;
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
  const stats = {
    api: await ask(servers.api.child, 'stats', { type: 'stop' }),
    baseline: await ask(servers.baseline.child, 'stats', { type: 'stop' }),
  };
  console.log(
    `\napi-read: ${CONCURRENCY} clients, ${DURATION_SECONDS}s per server and endpoint (${ROUNDS} alternating rounds, ` +
      `${WARMUP_SECONDS}s warm-up), ${MEMBERS} members, node ${process.version}\n`,
  );
  console.log(
    table(['endpoint', 'server', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'errors'], rows),
  );
  console.log(`\n${ratios.join('\n')}`);
  for (const mode of MODES) {
    const { peakRssMb, maxRssMb, heapAtPeakMb, externalAtPeakMb } = stats[mode];
    const mb = (n: number) => `${n.toFixed(0)} MB`;
    console.log(
      `${mode} process RSS: ${mb(servers[mode].readyRssMb)} when ready, peak ${mb(peakRssMb)} sampled ` +
        `(V8 heap ${mb(heapAtPeakMb)}, external ${mb(externalAtPeakMb)}; maxRSS ${mb(maxRssMb)})`,
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
