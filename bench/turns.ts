/**
 * Chat turn latency and conversation creation throughput, each against a bare baseline in the same run.
 *
 * 1. Turns: TURNS (default 50) chat members, each with its own socket.io client, each POST
 *    /orgs/{org}/conversations {agentId, message, requestId} at the same moment; per turn the time from
 *    issuing the POST to the first `delta` event and to the final `message` event on its socket.
 * 2. Direct: the same number of concurrent streaming calls with the openai SDK (configured as the service
 *    configures it: lib/llm.ts createLlmClient), the same model, messages and temperature the service sends;
 *    time to the first content token and to the end of the stream.
 *    Both arms talk to the same scripted LLM (test/helpers/llm.ts), which answers every call with the same
 *    CHUNKS (20) content chunks, CHUNK_DELAY_MS (5) apart. The arms alternate over ROUNDS (3) rounds, so
 *    p50/p99 are over TURNS × ROUNDS samples each. Before them: WARMUP_TURNS (5) sequential turns and calls
 *    plus a concurrent batch of 10 each (not counted), then SEQUENTIAL (10) turns and calls one at a time
 *    (reported as the unloaded latency).
 * 3. The overhead: p50 and p99 first delta (service) − first token (direct), against the targets
 *    (p50 ≤ 50 ms, p99 ≤ 250 ms), and the ratios of final message to end of stream. Where the time goes:
 *    each measured turn's Temporal history (event times) split into phases, p50/p99 per phase.
 * 4. Creates: CREATES (500) POST /conversations without a message by the owner, CREATE_CONCURRENCY (32)
 *    closed-loop keep-alive clients, against `insertOne` of the equivalent document into the same
 *    `conversations` collection with the MongoDB driver mongoose bundles, same concurrency (alternating
 *    halves after a warm-up); plus CREATES_SEQUENTIAL (50) of each one at a time.
 *
 * Everything runs in this one process, as in the tests: the API (createDeps + createApp + attachRealtime on a
 * loopback port), a real Temporal worker (worker/create-worker.ts + worker/worker-deps.ts, own task queue,
 * the configured concurrency limits), the scripted LLM and the load clients. So the service arm's times
 * include the CPU the API, the worker's activities and the clients take from one event loop; the direct
 * arm's include only the SDK's and the scripted LLM's. Event-loop delay per phase is printed to show it.
 * Response validation (a test-only setting) is off, as in production.
 * Reading the figures: under `bench/run.mjs` the database is the test profile's FerretDB v1 over SQLite, and
 * the Temporal server is the dev server (SQLite). In that FerretDB only a filter that is exactly `{_id}` is
 * pushed down; `{_id, organizationId}` or any other filter scans and decodes the whole collection, so the
 * service's scoped reads get slower as the collections grow during the run (DB_BREAKDOWN=1 shows it).
 *
 * Needs the stack env (MONGODB_URI, TEMPORAL_ADDRESS, REDIS_URL, JWT_SECRET …):
 *   STACK_PORT_OFFSET=500 node bench/run.mjs turns
 * Other knobs: DB_BREAKDOWN=1 (driver command monitoring on every connection: time per database command
 * during the concurrent turns and creates; adds a little overhead), BENCH_LOG_LEVEL (service log level,
 * default silent), TURN_TIMEOUT_MS (60000).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { tsToMs } from '@temporalio/common/lib/time';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import mongoose from 'mongoose';
import { io, type Socket } from 'socket.io-client';
import { createApp } from '@api/app';
import { attachRealtime } from '@api/realtime';
import { loadConfig } from '@lib/config';
import type { ConversationDoc } from '@lib/db/conversation.schema';
import { closeDeps, createDeps } from '@lib/deps';
import { newId } from '@lib/ids';
import { createLlmClient } from '@lib/llm';
import { createLogger } from '@lib/logger';
import { AgentsRepository } from '@lib/repositories/agents.repository';
import { GroupsRepository } from '@lib/repositories/groups.repository';
import { MembersRepository } from '@lib/repositories/members.repository';
import { UserAccountsRepository } from '@lib/repositories/users.repository';
import { bootstrapOrganization } from '@lib/services/bootstrap.service';
import { workflowIds } from '@lib/temporal/workflow-ids';
import { createWorker } from '@worker/create-worker';
import { createWorkerDeps } from '@worker/worker-deps';
import { startScriptedLlm } from '../test/helpers/llm';
import { keepAliveAgent, send, table } from './lib/load';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const TURNS = num('TURNS', 50);
const ROUNDS = num('ROUNDS', 3);
const WARMUP_TURNS = num('WARMUP_TURNS', 5);
const SEQUENTIAL = num('SEQUENTIAL', 10);
const CHUNKS = num('CHUNKS', 20);
const CHUNK_DELAY_MS = num('CHUNK_DELAY_MS', 5);
const CREATES = num('CREATES', 500);
const CREATE_CONCURRENCY = num('CREATE_CONCURRENCY', 32);
const CREATES_SEQUENTIAL = num('CREATES_SEQUENTIAL', 50);
const TURN_TIMEOUT_MS = num('TURN_TIMEOUT_MS', 60_000);
const DB_BREAKDOWN = process.env.DB_BREAKDOWN === '1';
const TARGET_P50_MS = 50;
const TARGET_P99_MS = 250;

const INSTRUCTIONS = 'You are a helpful assistant. Answer briefly.';
const QUESTION = 'Benchmark question: what are three good names for a cat?';
const TEMPERATURE = 0.7;
const PIECES = Array.from({ length: CHUNKS }, (_, i) => `word${i} `);
const REPLY = PIECES.join('');

// --- small helpers -------------------------------------------------------------------------------------

function pct(values: number[], q: number): number {
  const sorted = Float64Array.from(values.filter(Number.isFinite)).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
/** Wall-clock ms (sub-ms precision) of a performance.now() reading, to compare with Temporal event times. */
const wall = (perfNow: number) => performance.timeOrigin + perfNow;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

/** Event-loop delay over one phase (p99 and max in ms). */
function loopDelay() {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  return () => {
    h.disable();
    return { p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
  };
}

function postJson(baseUrl: string, agent: Agent, path: string, token: string, body: object) {
  return send(
    baseUrl,
    agent,
    'POST',
    path,
    { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    body,
  );
}

/** `count` operations by `concurrency` closed-loop clients; each latency and the wall time. */
async function closedLoop(count: number, concurrency: number, op: () => Promise<boolean>) {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const client = async () => {
    while (next < count) {
      next++;
      const t0 = performance.now();
      try {
        if (!(await op())) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return { latencies, errors, seconds: (performance.now() - started) / 1000 };
}

/** Per database command (`find members`, `insert conversations` …), the durations seen while recording. */
function dbRecorder() {
  const inFlight = new Map<string, string>();
  let current: Map<string, number[]> | undefined;
  const recorded: Record<string, Map<string, number[]>> = {};
  for (const conn of mongoose.connections) {
    const client = conn.readyState === mongoose.ConnectionStates.connected ? conn.getClient() : undefined;
    if (!client) continue;
    client.on('commandStarted', (e) => {
      const target = e.command[e.commandName] as unknown;
      inFlight.set(
        `${e.connectionId}:${e.requestId}`,
        `${e.commandName} ${typeof target === 'string' ? target : ''}`,
      );
    });
    client.on('commandSucceeded', (e) => {
      const id = `${e.connectionId}:${e.requestId}`;
      const name = inFlight.get(id);
      inFlight.delete(id);
      if (!current || !name) return;
      const list = current.get(name) ?? [];
      list.push(e.duration);
      current.set(name, list);
    });
  }
  return {
    start(label: string) {
      current = recorded[label] ??= new Map();
    },
    stop() {
      current = undefined;
    },
    recorded,
  };
}

// --- the benchmark -------------------------------------------------------------------------------------

interface Sample {
  /** ms from issuing the request to the first text (delta event / content token) */
  first: number;
  /** ms to the final message event / end of stream */
  end: number;
  /** service only: ms to the 201 answer */
  posted?: number;
  /** service only: what the phase breakdown needs */
  trace?: { requestId: string; t0: number; first: number; final: number };
}

interface PendingTurn {
  t0: number;
  firstDelta?: number;
  text: string;
  maxAttempt: number;
  done: (err?: Error, finalText?: string) => void;
}

async function main() {
  const startLoad = load();
  // The worker's INFO lines (state changes) would interleave with the tables.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const llm = await startScriptedLlm();
  const uri = process.env.MONGODB_URI ?? '';
  const config = loadConfig({
    ...process.env,
    ...(DB_BREAKDOWN ? { MONGODB_URI: `${uri}${uri.includes('?') ? '&' : '?'}monitorCommands=true` } : {}),
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: llm.apiKey,
    ALLOW_PRIVATE_OUTBOUND: 'true',
    TEMPORAL_TASK_QUEUE: `bench-turns-${process.pid}-${randomBytes(4).toString('hex')}`,
    VALIDATE_RESPONSES: 'false',
  });
  const deps = await createDeps(config, createLogger(process.env.BENCH_LOG_LEVEL ?? 'silent'));
  const server = createServer(createApp(deps));
  server.keepAliveTimeout = 120_000;
  const realtime = attachRealtime(server, deps);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const noop = () => undefined;
  const silent = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('@workflows/index'),
    logger: silent,
  });
  const workerResources = await createWorkerDeps(config);
  const { worker, connection } = await createWorker(config.temporal, workerResources.deps, {
    workflowBundle,
  });
  const running = worker.run();
  const mongo = new mongoose.mongo.MongoClient(config.mongodbUri);
  await mongo.connect();
  const db = DB_BREAKDOWN ? dbRecorder() : undefined;

  // --- seed: an org, a fullAccess group, TURNS chat members in it, one agent -----------------------------
  const { models, tokens } = deps;
  const tag = Date.now().toString(36);
  const boot = await bootstrapOrganization(models, tokens, {
    orgName: 'Bench Turns Org',
    email: `owner-${tag}@bench.test`,
    name: 'Bench Owner',
  });
  const orgId = boot.organizationId;
  const group = await new GroupsRepository(models, orgId).create({
    name: 'Everyone',
    description: 'all agents',
    fullAccess: true,
  });
  const accounts = new UserAccountsRepository(models);
  const members = new MembersRepository(models, orgId);
  const users: Array<{ userId: string; token: string }> = [];
  for (let i = 0; i < TURNS; i++) {
    const user = await accounts.create({ email: `chat${i}-${tag}@bench.test`, name: `Chat ${i}` });
    await members.add(user, 'chat');
    await members.setGroup(user._id, group._id);
    users.push({ userId: user._id, token: (await tokens.signSession(orgId, user._id)).token });
  }
  const model = `bench-model-${randomBytes(5).toString('hex')}`;
  const agentId = `agt_${randomBytes(8).toString('hex')}`;
  await new AgentsRepository(models, orgId).create(agentId, {
    name: 'Bench Helper',
    nameSort: 'bench helper',
    description: 'benchmark agent',
    instructions: INSTRUCTIONS,
    model,
    creativityScore: String(TEMPERATURE),
  });
  llm.on({ model }, { content: REPLY, chunks: PIECES, chunkDelayMs: CHUNK_DELAY_MS });

  // --- one socket.io client per member, all feeding one map of turns in flight ----------------------------
  const pending = new Map<string, PendingTurn>();
  const sockets: Socket[] = [];
  for (const u of users) {
    const socket = io(baseUrl, {
      transports: ['websocket'],
      reconnection: false,
      extraHeaders: { Authorization: `Bearer ${u.token}`, 'x-organization-id': orgId },
    });
    socket.on('conversation', (p: Record<string, unknown>) => {
      const now = performance.now();
      const turn = pending.get(String(p.requestId));
      if (!turn) return;
      if (p.type === 'delta') {
        const attempt = Number(p.attempt ?? 1);
        if (attempt > turn.maxAttempt) {
          // A retried model call streams again from the start.
          turn.maxAttempt = attempt;
          turn.text = '';
        }
        turn.firstDelta ??= now;
        turn.text += typeof p.text === 'string' ? p.text : '';
      } else if (p.type === 'message') {
        const message = p.message as { content?: Array<{ text?: string }> } | undefined;
        turn.done(undefined, message?.content?.map((c) => c.text ?? '').join(''));
      } else if (p.type === 'error') {
        turn.done(new Error(`turn failed: ${JSON.stringify(p.message)}`));
      }
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', reject);
    });
    sockets.push(socket);
  }

  const httpAgent = keepAliveAgent(Math.max(TURNS, CREATE_CONCURRENCY));
  const path = `/orgs/${orgId}/conversations`;

  /** One turn by `user`: POST, then wait for its final message on the user's socket. */
  async function serviceTurn(user: { token: string }): Promise<Sample> {
    const requestId = randomUUID();
    let finish!: (err?: Error, finalText?: string) => void;
    const finished = new Promise<{ at: number; text?: string }>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`turn ${requestId} timed out`)), TURN_TIMEOUT_MS);
      finish = (err, text) => {
        const at = performance.now();
        clearTimeout(timer);
        pending.delete(requestId);
        if (err) reject(err);
        else resolve({ at, text });
      };
    });
    finished.catch(noop); // awaited below; failing early must not leave it unhandled
    const turn: PendingTurn = {
      t0: performance.now(),
      text: '',
      maxAttempt: 1,
      done: (e, t) => finish(e, t),
    };
    pending.set(requestId, turn);
    let res: { status: number; body: string };
    try {
      res = await postJson(baseUrl, httpAgent, path, user.token, { agentId, message: QUESTION, requestId });
    } catch (err) {
      finish(err as Error);
      throw err;
    }
    const posted = performance.now() - turn.t0;
    if (res.status !== 201) {
      const err = new Error(`POST answered ${res.status}: ${res.body}`);
      finish(err);
      throw err;
    }
    const final = await finished;
    if (turn.firstDelta === undefined) throw new Error(`turn ${requestId}: message without deltas`);
    if (turn.text !== REPLY || final.text !== REPLY)
      throw new Error(`turn ${requestId}: streamed/stored text differs from the scripted reply`);
    return {
      first: turn.firstDelta - turn.t0,
      end: final.at - turn.t0,
      posted,
      trace: { requestId, t0: wall(turn.t0), first: wall(turn.firstDelta), final: wall(final.at) },
    };
  }

  const sdk = createLlmClient(config.llm);
  /** One streaming call straight to the scripted LLM, with the request the service's turn makes. */
  async function directCall(): Promise<Sample> {
    const t0 = performance.now();
    const stream = await sdk.chat.completions.create({
      model,
      messages: [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: QUESTION },
      ],
      stream: true,
      temperature: TEMPERATURE,
    });
    let first: number | undefined;
    let text = '';
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta?.content;
      if (piece) {
        first ??= performance.now();
        text += piece;
      }
    }
    const end = performance.now();
    if (first === undefined || text !== REPLY) throw new Error('direct call: unexpected stream');
    return { first: first - t0, end: end - t0 };
  }

  /** Runs all at once; a failed sample is counted, not measured. */
  async function batch(runs: Array<() => Promise<Sample>>) {
    const settled = await Promise.allSettled(runs.map((run) => run()));
    const ok = settled.filter((s): s is PromiseFulfilledResult<Sample> => s.status === 'fulfilled');
    const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed[0]) console.error(`  ${failed.length} failed, e.g. ${String(failed[0].reason)}`);
    return { samples: ok.map((s) => s.value), errors: failed.length };
  }

  // --- warm-up, then one at a time ------------------------------------------------------------------------
  for (let i = 0; i < WARMUP_TURNS; i++) {
    await serviceTurn(users[i % users.length]!);
    await directCall();
  }
  const few = users.slice(0, Math.min(10, TURNS));
  await batch(few.map(() => directCall));
  await batch(few.map((u) => () => serviceTurn(u)));
  const sequential: Record<'direct' | 'service', Sample[]> = { direct: [], service: [] };
  for (let i = 0; i < SEQUENTIAL; i++) {
    sequential.service.push(await serviceTurn(users[i % users.length]!));
    sequential.direct.push(await directCall());
  }

  // --- measured rounds: TURNS concurrent turns / calls, arms alternating ----------------------------------
  type Arm = 'direct' | 'service';
  const samples: Record<Arm, Sample[]> = { direct: [], service: [] };
  const errors: Record<Arm, number> = { direct: 0, service: 0 };
  const lag: Record<Arm, number[]> = { direct: [], service: [] };
  const roundRows: string[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order: Arm[] = round % 2 === 0 ? ['service', 'direct'] : ['direct', 'service'];
    for (const arm of order) {
      await sleep(250); // let the previous round's tail settle
      const stop = loopDelay();
      if (arm === 'service') db?.start('concurrent turns');
      const r = await batch(
        arm === 'service' ? users.map((u) => () => serviceTurn(u)) : users.map(() => directCall),
      );
      db?.stop();
      const l = stop();
      lag[arm].push(l.p99);
      samples[arm].push(...r.samples);
      errors[arm] += r.errors;
      const firsts = r.samples.map((s) => s.first);
      const ends = r.samples.map((s) => s.end);
      roundRows.push([
        String(round + 1),
        arm,
        String(r.samples.length),
        String(r.errors),
        ms(pct(firsts, 0.5)),
        ms(pct(firsts, 0.99)),
        ms(pct(ends, 0.5)),
        ms(pct(ends, 0.99)),
        ms(l.p99),
      ]);
    }
  }
  const turnsLoad = load();

  // --- where a turn's time goes, from its Temporal history ---------------------------------------------
  const phaseNames = [
    'POST → 201 at client',
    'POST → workflow started',
    'workflow started → loadTurn scheduled',
    'loadTurn scheduled → started',
    'loadTurn started → completed',
    'loadTurn completed → callModel scheduled',
    'callModel scheduled → started',
    'callModel started → first delta at client',
    'first delta at client → callModel completed',
    'callModel completed → saveReply scheduled',
    'saveReply scheduled → started',
    'saveReply started → message at client',
  ] as const;
  /** Each phase's durations over these turns. */
  async function phasesOf(turns: Sample[]) {
    const phases = new Map<string, number[]>(phaseNames.map((n) => [n, []]));
    for (const sample of turns) {
      const t = sample.trace!;
      const history = await deps.temporal.client.workflow
        .getHandle(workflowIds.turn(orgId, t.requestId))
        .fetchHistory();
      let started = NaN;
      const acts = new Map<string, { name: string; scheduled: number; started: number; completed: number }>();
      for (const e of history.events ?? []) {
        const at = tsToMs(e.eventTime);
        if (e.workflowExecutionStartedEventAttributes) started = at;
        const scheduled = e.activityTaskScheduledEventAttributes;
        if (scheduled) {
          const name = scheduled.activityType?.name ?? '?';
          acts.set(String(e.eventId), { name, scheduled: at, started: NaN, completed: NaN });
        }
        const s = e.activityTaskStartedEventAttributes;
        const a = s && acts.get(String(s.scheduledEventId));
        if (a) a.started = at;
        const c = e.activityTaskCompletedEventAttributes;
        const b = c && acts.get(String(c.scheduledEventId));
        if (b) b.completed = at;
      }
      const act = (name: string) =>
        [...acts.values()].find((a) => a.name === name) ?? { scheduled: NaN, started: NaN, completed: NaN };
      const [load_, call, save] = [act('loadTurn'), act('callModel'), act('saveReply')];
      const values = [
        sample.posted!,
        started - t.t0,
        load_.scheduled - started,
        load_.started - load_.scheduled,
        load_.completed - load_.started,
        call.scheduled - load_.completed,
        call.started - call.scheduled,
        t.first - call.started,
        call.completed - t.first,
        save.scheduled - call.completed,
        save.started - save.scheduled,
        t.final - save.started,
      ];
      phaseNames.forEach((n, i) => phases.get(n)!.push(values[i]!));
    }
    return phases;
  }
  const phases = {
    sequential: await phasesOf(sequential.service),
    concurrent: await phasesOf(samples.service),
  };

  // --- conversation creation: API vs bare driver insert ---------------------------------------------------
  const conversations = mongo.db().collection<ConversationDoc>('conversations');
  const apiCreate = async () => {
    const res = await postJson(baseUrl, httpAgent, path, boot.sessionToken, { agentId });
    return res.status === 201;
  };
  const driverCreate = async () => {
    const now = new Date();
    await conversations.insertOne({
      _id: newId('cnv'),
      organizationId: orgId,
      agentId,
      title: 'New conversation',
      creatorUserId: boot.userId,
      isBrowserTask: false,
      lastMessageCreatedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    return true;
  };
  const warmCreates = Math.min(64, CREATES);
  await closedLoop(warmCreates, CREATE_CONCURRENCY, apiCreate);
  await closedLoop(warmCreates, CREATE_CONCURRENCY, driverCreate);
  type Side = 'api' | 'driver';
  const newCreates = () => ({ latencies: [] as number[], errors: 0, seconds: 0, lag: [] as number[] });
  const creates = { api: newCreates(), driver: newCreates() };
  const creates1 = { api: newCreates(), driver: newCreates() };
  const halves = [Math.ceil(CREATES / 2), Math.floor(CREATES / 2)];
  for (let half = 0; half < 2; half++) {
    const order: Side[] = half === 0 ? ['api', 'driver'] : ['driver', 'api'];
    for (const side of order) {
      const stop = loopDelay();
      if (side === 'api') db?.start('concurrent creates');
      const r = await closedLoop(
        halves[half]!,
        CREATE_CONCURRENCY,
        side === 'api' ? apiCreate : driverCreate,
      );
      db?.stop();
      creates[side].lag.push(stop().p99);
      creates[side].latencies.push(...r.latencies);
      creates[side].errors += r.errors;
      creates[side].seconds += r.seconds;
    }
  }
  for (const side of ['api', 'driver'] as const) {
    const stop = loopDelay();
    const r = await closedLoop(CREATES_SEQUENTIAL, 1, side === 'api' ? apiCreate : driverCreate);
    Object.assign(creates1[side], { ...r, lag: [stop().p99] });
  }
  const endLoad = load();

  // --- report ---------------------------------------------------------------------------------------------
  const stat = (s: Sample[]) => {
    const firsts = s.map((x) => x.first);
    const ends = s.map((x) => x.end);
    return {
      n: s.length,
      first50: pct(firsts, 0.5),
      first99: pct(firsts, 0.99),
      end50: pct(ends, 0.5),
      end99: pct(ends, 0.99),
    };
  };
  const d = stat(samples.direct);
  const s = stat(samples.service);
  const posted = samples.service.map((x) => x.posted ?? NaN);
  const row = (label: string, st: ReturnType<typeof stat>, errs: number | string) => [
    label,
    String(st.n),
    String(errs),
    ms(st.first50),
    ms(st.first99),
    ms(st.end50),
    ms(st.end99),
  ];

  console.log(
    `\nturns: ${TURNS} concurrent turns × ${ROUNDS} rounds per arm (arms alternating), scripted reply ` +
      `${CHUNKS} chunks × ${CHUNK_DELAY_MS} ms; worker limits ${config.temporal.maxConcurrentActivities} ` +
      `activities / ${config.temporal.maxConcurrentWorkflowTasks} workflow tasks; node ${process.version}, ` +
      `${cpus().length} CPUs${DB_BREAKDOWN ? ', DB command monitoring ON' : ''}`,
  );
  console.log(`load average (1/5/15 min): start ${startLoad}, after turns ${turnsLoad}, end ${endLoad}\n`);
  console.log(
    table(
      ['round', 'arm', 'ok', 'errors', 'first p50', 'first p99', 'end p50', 'end p99', 'loop lag p99'],
      roundRows,
    ),
  );
  console.log('');
  console.log(
    table(
      ['ms', 'samples', 'errors', 'first p50', 'first p99', 'end p50', 'end p99'],
      [
        row(`direct, ${TURNS} concurrent: SDK first token / end of stream`, d, errors.direct),
        row(`service, ${TURNS} concurrent: POST → first delta / message`, s, errors.service),
        [
          `service, ${TURNS} concurrent: POST → 201`,
          String(posted.length),
          '',
          ms(pct(posted, 0.5)),
          ms(pct(posted, 0.99)),
          '',
          '',
        ],
        row('direct, one at a time', stat(sequential.direct), 0),
        row('service, one at a time', stat(sequential.service), 0),
      ],
    ),
  );
  const over50 = s.first50 - d.first50;
  const over99 = s.first99 - d.first99;
  const verdict = (v: number, target: number) => (v <= target ? 'met' : 'NOT met');
  console.log(
    `\nfirst-delta overhead p50: ${over50.toFixed(1)} ms (target ≤ ${TARGET_P50_MS} ms): ` +
      verdict(over50, TARGET_P50_MS),
  );
  console.log(
    `first-delta overhead p99: ${over99.toFixed(1)} ms (target ≤ ${TARGET_P99_MS} ms): ` +
      verdict(over99, TARGET_P99_MS),
  );
  console.log(
    `final message / end of stream: p50 ${(s.end50 / d.end50).toFixed(2)}× ` +
      `(+${(s.end50 - d.end50).toFixed(1)} ms), p99 ${(s.end99 / d.end99).toFixed(2)}× ` +
      `(+${(s.end99 - d.end99).toFixed(1)} ms)`,
  );
  console.log(
    `event-loop delay p99 (worst round): service ${ms(Math.max(...lag.service))} ms, ` +
      `direct ${ms(Math.max(...lag.direct))} ms`,
  );

  console.log(
    `\nwhere a turn's time goes (Temporal event times, ms resolution): ${sequential.service.length} turns ` +
      `one at a time, ${samples.service.length} in rounds of ${TURNS} concurrent\n`,
  );
  const p = (phase: Map<string, number[]>, n: string, q: number) => ms(pct(phase.get(n)!, q));
  console.log(
    table(
      ['phase', '1 at a time p50', `${TURNS} concurrent p50`, `${TURNS} concurrent p99`],
      phaseNames.map((n) => [
        n,
        p(phases.sequential, n, 0.5),
        p(phases.concurrent, n, 0.5),
        p(phases.concurrent, n, 0.99),
      ]),
    ),
  );

  const createRow = (label: string, c: ReturnType<typeof newCreates>) => [
    label,
    String(c.latencies.length),
    String(c.errors),
    (c.latencies.length / c.seconds).toFixed(0),
    ms(pct(c.latencies, 0.5)),
    ms(pct(c.latencies, 0.99)),
    ms(Math.max(...c.lag)),
  ];
  console.log(
    `\nconversation creation: ${CREATES} per side with ${CREATE_CONCURRENCY} concurrent clients, ` +
      `${CREATES_SEQUENTIAL} per side one at a time\n`,
  );
  console.log(
    table(
      ['create', 'n', 'errors', 'per s', 'p50 ms', 'p99 ms', 'loop lag p99'],
      [
        createRow(`POST /orgs/{org}/conversations, ${CREATE_CONCURRENCY} clients`, creates.api),
        createRow(`driver insertOne, ${CREATE_CONCURRENCY} clients`, creates.driver),
        createRow('POST /orgs/{org}/conversations, 1 client', creates1.api),
        createRow('driver insertOne, 1 client', creates1.driver),
      ],
    ),
  );
  const rate = (c: ReturnType<typeof newCreates>) => c.latencies.length / c.seconds;
  console.log(
    `\napi/driver conversations per second: ${(rate(creates.api) / rate(creates.driver)).toFixed(3)} at ` +
      `${CREATE_CONCURRENCY} clients, ${(rate(creates1.api) / rate(creates1.driver)).toFixed(3)} at 1 client`,
  );

  if (db) {
    for (const [label, commands] of Object.entries(db.recorded)) {
      const rows = [...commands.entries()]
        .map(([name, d]) => ({ name, d, total: d.reduce((a, b) => a + b, 0) }))
        .sort((a, b) => b.total - a.total)
        .slice(0, 15)
        .map(({ name, d, total }) => [
          name,
          String(d.length),
          ms(pct(d, 0.5)),
          ms(pct(d, 0.99)),
          total.toFixed(0),
        ]);
      console.log(`\ndatabase commands during ${label} (API + worker connections, top 15 by total time)\n`);
      console.log(table(['command', 'count', 'p50 ms', 'p99 ms', 'total ms'], rows));
    }
  }

  // --- teardown -------------------------------------------------------------------------------------------
  for (const socket of sockets) socket.disconnect();
  httpAgent.destroy();
  await mongo.close();
  worker.shutdown();
  await running;
  await connection.close();
  await workerResources.close();
  await realtime.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await closeDeps(deps);
  await llm.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
