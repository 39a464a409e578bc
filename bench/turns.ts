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
 *    p50/p99 are over TURNS × ROUNDS samples each. Before them: WARMUP_TURNS (200) sequential turns and calls
 *    plus a concurrent batch of 10 each (not counted), then SEQUENTIAL (10) turns and calls one at a time
 *    (reported as the unloaded latency). The long warm-up is for the stack's database, a fresh JVM at every
 *    bench start that compiles its hot paths over the first thousand or so writes: a service runs warm.
 * 3. The overhead: p50 and p99 first delta (service) − first token (direct), against the issue's targets
 *    (p50 ≤ 50 ms, p99 ≤ 250 ms), and the ratios of final message to end of stream. Where the time goes:
 *    each measured turn's Temporal history (event times) split into phases, p50/p99 per phase.
 * 4. Creates: CREATES (500) POST /conversations without a message by the owner, CREATE_CONCURRENCY (32)
 *    closed-loop keep-alive clients, against `insertOne` of the equivalent document into the same
 *    `conversations` collection with the MongoDB driver mongoose bundles, same concurrency (alternating
 *    halves after a warm-up); plus CREATES_SEQUENTIAL (50) of each one at a time.
 * 5. Bare workflows: the same shape of load with the smallest durable unit, a workflow that starts and completes
 *    (bench/lib/noop-workflow.ts, its own worker in this process): SEQUENTIAL one at a time, then ROUNDS rounds of
 *    TURNS at once, start → result. Their ratio (concurrent p50 / one at a time p50) is what this stack's Temporal
 *    allows any turn-shaped workflow on this machine, and is printed beside the service's first-delta ratio.
 * 6. The floor (issue 35): in every measured round, beside the turns and the direct calls, TURNS bare workflows
 *    that run one activity, at once (bench/lib/noop-workflow.ts on its own worker in this process), timed from
 *    issuing the start to the activity starting. A turn streams from its first activity, so nothing on this
 *    stack can give a first delta sooner; the target is first delta p50 ≤ 1.3× the floor's p50.
 *
 * The API (with socket.io) and the worker run as they ship, each in its own process (bench/turns/harness.ts,
 * bench/lib/service-processes.ts); this process holds the scripted LLM, the load clients and their sockets. The
 * arms are in bench/turns/measure.ts, the tables in bench/turns/report.ts. Event-loop delay per phase (this
 * process's) is printed to show the clients' own delay; CPU per turn is read per process from /proc.
 * Reading the figures: under `bench/run.mjs` the database is the test profile's embedded mongo-java-server
 * (H2), and the Temporal server is the dev server (SQLite). That database uses only `_id` and unique indexes;
 * any other filter scans the collection in Java, so scoped list reads get slower as the collections grow
 * during the run.
 *
 * Needs the stack env (MONGODB_URI, TEMPORAL_ADDRESS, REDIS_URL, JWT_SECRET …) and a build (dist/):
 *   STACK_PORT_OFFSET=500 node bench/run.mjs turns
 * Other knobs: BENCH_LOG_LEVEL (the API's and worker's log level, default silent), TURN_TIMEOUT_MS (60000),
 * PROFILE=1 (CPU profiles of the API and worker into .stack/bench-profiles).
 */
import { cpus, loadavg } from 'node:os';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import mongoose from 'mongoose';
import type { ConversationDoc } from '@lib/conversations/conversation.schema';
import { newId } from '@lib/ids';
import { createLlmClient } from '@lib/llm';
import { bareTaskQueue, startBareWorker } from './lib/bare-worker';
import { cpuAccount, procStats, stackPids } from './lib/proc';
import { startTurnsHarness } from './turns/harness';
import {
  bareWorkflows,
  batch,
  closedLoop,
  directCall,
  floorArm,
  loopDelay,
  outOfOrder,
  pct,
  phasesOf,
  serviceTurn,
  type Sample,
} from './turns/measure';
import {
  ms,
  printBare,
  printCpu,
  printCreates,
  printFloor,
  printTurns,
  type CreateStats,
} from './turns/report';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const TURNS = num('TURNS', 50);
const ROUNDS = num('ROUNDS', 3);
const WARMUP_TURNS = num('WARMUP_TURNS', 200);
const SEQUENTIAL = num('SEQUENTIAL', 10);
const CHUNKS = num('CHUNKS', 20);
const CHUNK_DELAY_MS = num('CHUNK_DELAY_MS', 5);
const CREATES = num('CREATES', 500);
const CREATE_CONCURRENCY = num('CREATE_CONCURRENCY', 32);
const CREATES_SEQUENTIAL = num('CREATES_SEQUENTIAL', 50);
const TURN_TIMEOUT_MS = num('TURN_TIMEOUT_MS', 60_000);
const TARGETS = { p50: 50, p99: 250 };

const INSTRUCTIONS = 'You are a helpful assistant. Answer briefly.';
const QUESTION = 'Benchmark question: what are three good names for a cat?';
const TEMPERATURE = 0.7;
const PIECES = Array.from({ length: CHUNKS }, (_, i) => `word${i} `);
const REPLY = PIECES.join('');

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

type Arm = 'direct' | 'service' | 'floor';

async function main() {
  const startLoad = load();
  // The worker's INFO lines (state changes) would interleave with the tables.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const harness = await startTurnsHarness({
    turns: TURNS,
    createConcurrency: CREATE_CONCURRENCY,
    turnTimeoutMs: TURN_TIMEOUT_MS,
    instructions: INSTRUCTIONS,
    temperature: TEMPERATURE,
    pieces: PIECES,
    chunkDelayMs: CHUNK_DELAY_MS,
  });
  const { config, users, boot, agentId } = harness;
  const mongo = new mongoose.mongo.MongoClient(config.mongodbUri);
  await mongo.connect();
  const sdk = createLlmClient(config.llm);
  const request = {
    model: harness.model,
    instructions: INSTRUCTIONS,
    question: QUESTION,
    temperature: TEMPERATURE,
  };
  const service = (token: string) => serviceTurn(harness, token, QUESTION, REPLY);
  const direct = () => directCall(sdk, request, REPLY);

  // --- warm-up, then one at a time ------------------------------------------------------------------------
  for (let i = 0; i < WARMUP_TURNS; i++) {
    await service(users[i % users.length]!.token);
    await direct();
  }
  const few = users.slice(0, Math.min(10, TURNS));
  await batch(few.map(() => direct));
  await batch(few.map((u) => () => service(u.token)));
  // The floor's own worker and workflows, warmed like the turns.
  const floor = floorArm(harness.deps.temporal.client.workflow, bareTaskQueue(config.temporal));
  const floorWorker = await startBareWorker(
    config.temporal,
    require.resolve('./lib/noop-workflow'),
    floor.activities,
  );
  for (let i = 0; i < WARMUP_TURNS; i++) await floor.one();
  const sequential: Record<'direct' | 'service', Sample[]> = { direct: [], service: [] };
  for (let i = 0; i < SEQUENTIAL; i++) {
    sequential.service.push(await service(users[i % users.length]!.token));
    sequential.direct.push(await direct());
  }

  // --- measured rounds: TURNS concurrent turns / calls, arms alternating ----------------------------------
  // CPU of every process a turn uses, over the service rounds only: the floor any latency under load has.
  const pids = { 'bench (clients, sockets, model)': process.pid, ...harness.pids, ...stackPids(config) };
  const cpu = cpuAccount(pids);
  // The same processes over the floor's rounds (its client and worker are the bench process).
  const floorCpu = cpuAccount(pids);
  const samples: Record<'direct' | 'service', Sample[]> = { direct: [], service: [] };
  const errors: Record<'direct' | 'service', number> = { direct: 0, service: 0 };
  const lag: Record<'direct' | 'service', number[]> = { direct: [], service: [] };
  const roundRows: string[][] = [];
  /** Per round, the floor's p50 and the service's first-delta p50 (the ratio is taken per round, side by side). */
  const floorRounds: Array<{ floor: number[]; service: number[] }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order: Arm[] = round % 2 === 0 ? ['service', 'floor', 'direct'] : ['floor', 'direct', 'service'];
    const pair = { floor: [] as number[], service: [] as number[] };
    floorRounds.push(pair);
    for (const arm of order) {
      await sleep(250); // let the previous round's tail settle
      if (arm === 'floor') {
        floorCpu.start();
        pair.floor = await Promise.all(users.map(() => floor.one()));
        floorCpu.stop();
        continue;
      }
      const stop = loopDelay();
      if (arm === 'service') cpu.start();
      const r = await batch(
        arm === 'service' ? users.map((u) => () => service(u.token)) : users.map(() => direct),
      );
      if (arm === 'service') cpu.stop();
      const l = stop();
      lag[arm].push(l.p99);
      samples[arm].push(...r.samples);
      if (arm === 'service') pair.service = r.samples.map((x) => x.first);
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
  await floorWorker.stop();
  const turnsLoad = load();
  const phases = {
    sequential: await phasesOf(harness, sequential.service),
    concurrent: await phasesOf(harness, samples.service),
  };

  // --- bare workflows under the same load -----------------------------------------------------------------
  const bareWorker = await startBareWorker(config.temporal, require.resolve('./lib/noop-workflow'));
  const bare = await bareWorkflows(harness.deps.temporal.client.workflow, bareWorker.taskQueue, {
    sequential: SEQUENTIAL,
    concurrent: TURNS,
    rounds: ROUNDS,
  });
  await bareWorker.stop();

  // --- conversation creation: API vs bare driver insert ---------------------------------------------------
  const conversations = mongo.db().collection<ConversationDoc>('conversations');
  const apiCreate = async () => (await harness.post(boot.sessionToken, { agentId })).status === 201;
  const driverCreate = async () => {
    const now = new Date();
    await conversations.insertOne({
      _id: newId('cnv'),
      organizationId: harness.orgId,
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
  const newCreates = (): CreateStats => ({ latencies: [], errors: 0, seconds: 0, lag: [] });
  const creates = { api: newCreates(), driver: newCreates() };
  const creates1 = { api: newCreates(), driver: newCreates() };
  const halves = [Math.ceil(CREATES / 2), Math.floor(CREATES / 2)];
  for (let half = 0; half < 2; half++) {
    const order: Side[] = half === 0 ? ['api', 'driver'] : ['driver', 'api'];
    for (const side of order) {
      const stop = loopDelay();
      const r = await closedLoop(
        halves[half]!,
        CREATE_CONCURRENCY,
        side === 'api' ? apiCreate : driverCreate,
      );
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
  console.log(
    `\nturns: ${TURNS} concurrent turns × ${ROUNDS} rounds per arm (arms alternating), scripted reply ` +
      `${CHUNKS} chunks × ${CHUNK_DELAY_MS} ms; worker limits ${config.temporal.maxConcurrentActivities} ` +
      `activities / ${config.temporal.maxConcurrentWorkflowTasks} workflow tasks; node ${process.version}, ` +
      `${cpus().length} CPUs`,
  );
  console.log(`load average (1/5/15 min): start ${startLoad}, after turns ${turnsLoad}, end ${endLoad}\n`);
  printTurns({ turns: TURNS, targets: TARGETS, roundRows, samples, sequential, errors, lag, phases });
  printBare(bare, { sequential: sequential.service, concurrent: samples.service }, TURNS);
  printFloor(floorRounds, TURNS);
  printCpu(cpu.total, TURNS * ROUNDS, TURNS);
  printCpu(floorCpu.total, TURNS * ROUNDS, TURNS, 'floor workflow (start to result)');
  if (outOfOrder.length)
    console.log(
      `\n${outOfOrder.length} turn(s) received deltas out of seq order, e.g. ${outOfOrder[0]!.requestId}: ` +
        `seq ${outOfOrder[0]!.arrived.join(',')}`,
    );
  printCreates(
    { creates: CREATES, concurrency: CREATE_CONCURRENCY, sequential: CREATES_SEQUENTIAL },
    creates,
    creates1,
  );

  const peak = Object.entries(harness.pids).map(
    ([name, pid]) => `${name} ${pid === undefined ? '-' : procStats(pid).peakRssMb.toFixed(0)} MB`,
  );
  console.log(`\npeak RSS (VmHWM): ${peak.join(', ')}`);

  await mongo.close();
  await harness.close();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
