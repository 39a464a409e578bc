import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps, type Deps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import { startScriptedLlm } from '@test/helpers/llm';
import { deltaPlace } from '../lib/deltas';
import { keepAliveAgent, send } from '../lib/load';
import { startApiProcess, startWorkerProcess, stopProcess } from '../lib/service-processes';

// The service under measurement as it ships: the API (with socket.io) and the worker each in its own process
// (bench/lib/service-processes.ts). This process holds the scripted LLM (test/helpers/llm.ts), the load clients
// and their sockets, and its own deps for seeding and for reading the turns' histories.

export interface TurnsSettings {
  turns: number;
  createConcurrency: number;
  turnTimeoutMs: number;
  instructions: string;
  temperature: number;
  /** what the scripted LLM streams for every call */
  pieces: string[];
  chunkDelayMs: number;
}

interface PendingTurn {
  t0: number;
  firstDelta?: number;
  /** the latest round's latest attempt's deltas by `seq`, and the order their `seq`s arrived in */
  pieces: string[];
  arrived: number[];
  /** [round, attempt] of those deltas */
  latest: [number, number];
  done: (err?: Error, finalText?: string) => void;
}

/** What one turn measured: ms from issuing the POST to the first delta, to the message, to the 201. */
export interface TurnTiming {
  requestId: string;
  conversationId: string;
  t0: number;
  firstDelta: number;
  final: number;
  finalText?: string;
  text: string;
  /** the deltas' `seq`s in arrival order */
  arrived: number[];
  posted: number;
}

export async function startTurnsHarness(settings: TurnsSettings) {
  const llm = await startScriptedLlm();
  // What the API and worker processes get on top of the stack's env, and this process's own config.
  const serviceEnv = {
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: llm.apiKey,
    TEMPORAL_TASK_QUEUE: `bench-turns-${process.pid}-${randomBytes(4).toString('hex')}`,
    // The bench measures a turn's latency, not the organization's turn limit: a round's `turns` start at once,
    // and a straggler of the previous round may still be running.
    MAX_CONCURRENT_TURNS_PER_ORG: String(settings.turns * 2),
  };
  const config = loadConfig({ ...process.env, ...serviceEnv });
  const deps = await createDeps(config, { logger: createLogger('silent') });
  // The worker polls once it has bundled the workflows: the first warm-up turn waits for it.
  const worker = startWorkerProcess(serviceEnv);
  const api = await startApiProcess(serviceEnv);
  const baseUrl = `http://127.0.0.1:${api.port}`;

  const seeded = await seed(deps, settings);
  llm.on(
    { model: seeded.model },
    { content: settings.pieces.join(''), chunks: settings.pieces, chunkDelayMs: settings.chunkDelayMs },
  );
  const pending = new Map<string, PendingTurn>();
  const sockets = await Promise.all(
    seeded.users.map((u) => connectSocket(baseUrl, seeded.orgId, u.token, pending)),
  );
  const httpAgent = keepAliveAgent(Math.max(settings.turns, settings.createConcurrency));
  const path = `/orgs/${seeded.orgId}/conversations`;
  const post = (token: string, body: object) =>
    send(
      baseUrl,
      httpAgent,
      'POST',
      path,
      { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      body,
    );

  /** One turn by `token`'s user: POST, then wait for its final message on the user's socket. */
  async function turn(token: string, message: string): Promise<TurnTiming> {
    const requestId = randomUUID();
    let finish!: (err?: Error, finalText?: string) => void;
    const finished = new Promise<{ at: number; text?: string }>((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`turn ${requestId} timed out`)),
        settings.turnTimeoutMs,
      );
      finish = (err, text) => {
        const at = performance.now();
        clearTimeout(timer);
        pending.delete(requestId);
        if (err) reject(err);
        else resolve({ at, text });
      };
    });
    finished.catch(() => undefined); // awaited below; failing early must not leave it unhandled
    const entry: PendingTurn = {
      t0: performance.now(),
      pieces: [],
      arrived: [],
      latest: [0, 1],
      done: (e, t) => finish(e, t),
    };
    pending.set(requestId, entry);
    let res: { status: number; body: string };
    try {
      res = await post(token, { agentId: seeded.agentId, message, requestId });
    } catch (err) {
      finish(err as Error);
      throw err;
    }
    const posted = performance.now() - entry.t0;
    if (res.status !== 201) {
      const err = new Error(`POST answered ${res.status}: ${res.body}`);
      finish(err);
      throw err;
    }
    const { conversationId } = JSON.parse(res.body) as { conversationId: string };
    const final = await finished;
    if (entry.firstDelta === undefined) throw new Error(`turn ${requestId}: message without deltas`);
    return {
      requestId,
      conversationId,
      t0: entry.t0,
      firstDelta: entry.firstDelta,
      final: final.at,
      finalText: final.text,
      text: entry.pieces.join(''),
      arrived: entry.arrived,
      posted,
    };
  }

  return {
    config,
    deps,
    llm,
    ...seeded,
    /** the pids whose CPU a turn takes besides the stack's servers */
    pids: { API: api.child.pid, worker: worker.pid },
    post,
    turn,
    async close() {
      for (const socket of sockets) socket.disconnect();
      httpAgent.destroy();
      await Promise.all([stopProcess(api.child), stopProcess(worker)]);
      await closeDeps(deps);
      await llm.close();
    },
  };
}

/** An organization, a fullAccess group, `turns` chat members in it, one agent with a model of its own. */
async function seed(deps: Deps, settings: TurnsSettings) {
  const tag = Date.now().toString(36);
  const boot = await bootstrapOrganization(deps, {
    orgName: 'Bench Turns Org',
    email: `owner-${tag}@bench.test`,
    name: 'Bench Owner',
  });
  const orgId = boot.organizationId;
  const tenant = deps.repos.tenant(orgId);
  const group = await tenant.groups.create({ name: 'Everyone', description: 'all agents', fullAccess: true });
  const users: Array<{ userId: string; token: string }> = [];
  for (let i = 0; i < settings.turns; i++) {
    const user = await deps.repos.accounts.create({ email: `chat${i}-${tag}@bench.test`, name: `Chat ${i}` });
    await tenant.members.add(user, 'chat');
    await tenant.members.setGroup(user._id, group._id);
    users.push({ userId: user._id, token: (await deps.tokens.signSession(orgId, user._id)).token });
  }
  const model = `bench-model-${randomBytes(5).toString('hex')}`;
  const agentId = `agt_${randomBytes(8).toString('hex')}`;
  await tenant.agents.create(agentId, {
    name: 'Bench Helper',
    nameSort: 'bench helper',
    description: 'benchmark agent',
    instructions: settings.instructions,
    model,
    creativityScore: String(settings.temperature),
  });
  return { boot, orgId, users, model, agentId };
}

/** A member's socket.io client, feeding the map of turns in flight. */
async function connectSocket(
  baseUrl: string,
  orgId: string,
  token: string,
  pending: Map<string, PendingTurn>,
) {
  const socket: Socket = io(baseUrl, {
    transports: ['websocket'],
    reconnection: false,
    extraHeaders: { Authorization: `Bearer ${token}`, 'x-organization-id': orgId },
  });
  socket.on('conversation', (p: Record<string, unknown>) => {
    const now = performance.now();
    const turn = pending.get(String(p.requestId));
    if (!turn) return;
    if (p.type === 'delta') {
      const place = deltaPlace(turn.latest, p);
      if (place === 'stale') return;
      if (place === 'newer') {
        turn.pieces = [];
        turn.arrived = [];
      }
      turn.firstDelta ??= now;
      // Assembled by seq, as docs/agents.md tells clients to (the order of arrival is recorded and reported).
      const seq = Number(p.seq);
      turn.pieces[seq] = typeof p.text === 'string' ? p.text : '';
      turn.arrived.push(seq);
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
  return socket;
}

export type TurnsHarness = Awaited<ReturnType<typeof startTurnsHarness>>;
