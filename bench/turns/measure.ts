import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { WorkflowClient } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import type OpenAI from 'openai';
import { workflowIds } from '@contracts';
import type { TurnsHarness } from './harness';

// The measured arms and what they record.

export interface Sample {
  /** ms from issuing the request to the first text (delta event / content token) */
  first: number;
  /** ms to the final message event / end of stream */
  end: number;
  /** service only: ms to the 201 answer */
  posted?: number;
  /** service only: what the phase breakdown needs (wall-clock ms) */
  trace?: { requestId: string; conversationId: string; t0: number; first: number; final: number };
}

export function pct(values: number[], q: number): number {
  const sorted = Float64Array.from(values.filter(Number.isFinite)).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** Wall-clock ms (sub-ms precision) of a performance.now() reading, to compare with Temporal event times. */
const wall = (perfNow: number) => performance.timeOrigin + perfNow;

/** Event-loop delay over one phase (p99 and max in ms). */
export function loopDelay() {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  return () => {
    h.disable();
    return { p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
  };
}

/** The service arm: one turn through the API, the worker and the socket, checked against the scripted reply. */
/** Turns whose deltas arrived in another order than their `seq` (reported, not failed: clients order by seq). */
export const outOfOrder: Array<{ requestId: string; arrived: number[] }> = [];

export async function serviceTurn(harness: TurnsHarness, token: string, question: string, reply: string) {
  const t = await harness.turn(token, question);
  if (t.arrived.some((seq, i) => i > 0 && seq < t.arrived[i - 1]!))
    outOfOrder.push({ requestId: t.requestId, arrived: t.arrived });
  if (t.text !== reply || t.finalText !== reply)
    throw new Error(
      `turn ${t.requestId}: streamed/stored text differs from the scripted reply: ` +
        JSON.stringify({ streamed: t.text, stored: t.finalText, scripted: reply }),
    );
  return {
    first: t.firstDelta - t.t0,
    end: t.final - t.t0,
    posted: t.posted,
    trace: {
      requestId: t.requestId,
      conversationId: t.conversationId,
      t0: wall(t.t0),
      first: wall(t.firstDelta),
      final: wall(t.final),
    },
  } satisfies Sample;
}

/** The direct arm: one streaming call straight to the scripted LLM, with the request the service's turn makes. */
export async function directCall(
  sdk: OpenAI,
  request: { model: string; instructions: string; question: string; temperature: number },
  reply: string,
): Promise<Sample> {
  const t0 = performance.now();
  const stream = await sdk.chat.completions.create({
    model: request.model,
    messages: [
      { role: 'system', content: request.instructions },
      { role: 'user', content: request.question },
    ],
    stream: true,
    temperature: request.temperature,
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
  if (first === undefined || text !== reply) throw new Error('direct call: unexpected stream');
  return { first: first - t0, end: end - t0 };
}

/** Runs all at once; a failed sample is counted, not measured. */
export async function batch(runs: Array<() => Promise<Sample>>) {
  const settled = await Promise.allSettled(runs.map((run) => run()));
  const ok = settled.filter((s): s is PromiseFulfilledResult<Sample> => s.status === 'fulfilled');
  const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed[0]) console.error(`  ${failed.length} failed, e.g. ${String(failed[0].reason)}`);
  return { samples: ok.map((s) => s.value), errors: failed.length };
}

/**
 * The bare arm: `bareNoopWorkflow` (bench/lib/noop-workflow.ts) on `taskQueue`, started and awaited through
 * `client`; ms from start to result, `sequential` one at a time, then `rounds` rounds of `concurrent` at once.
 */
export async function bareWorkflows(
  client: WorkflowClient,
  taskQueue: string,
  counts: { sequential: number; concurrent: number; rounds: number },
) {
  const prefix = `bench-turns-bare-${randomBytes(4).toString('hex')}`;
  let n = 0;
  const one = async () => {
    const t0 = performance.now();
    const i = n++;
    await client.execute('bareNoopWorkflow', { taskQueue, workflowId: `${prefix}-${i}`, args: [i] });
    return performance.now() - t0;
  };
  const sequential: number[] = [];
  for (let i = 0; i < counts.sequential; i++) sequential.push(await one());
  const concurrent: number[] = [];
  for (let round = 0; round < counts.rounds; round++) {
    concurrent.push(...(await Promise.all(Array.from({ length: counts.concurrent }, one))));
  }
  return { sequential, concurrent };
}

/**
 * The floor of a turn under load (issue 35): a bare workflow that runs one activity, timed from issuing its start
 * to its activity starting (the activity runs in this process and records when). A turn's first delta cannot come
 * sooner than its own first activity starts. `activities` go to the bare worker; `one()` is one execution.
 */
export function floorArm(client: WorkflowClient, taskQueue: string) {
  const prefix = `bench-turns-floor-${randomBytes(4).toString('hex')}`;
  const activityStarted = new Map<number, number>();
  let n = 0;
  return {
    activities: {
      noopActivity(i: number) {
        activityStarted.set(i, performance.now());
        return Promise.resolve(i);
      },
    },
    async one(): Promise<number> {
      const i = n++;
      const t0 = performance.now();
      await client.execute('bareActivityWorkflow', { taskQueue, workflowId: `${prefix}-${i}`, args: [i] });
      const started = activityStarted.get(i)!;
      activityStarted.delete(i);
      return started - t0;
    },
  };
}

/** `count` operations by `concurrency` closed-loop clients; each latency and the wall time. */
export async function closedLoop(count: number, concurrency: number, op: () => Promise<boolean>) {
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

export const PHASES = [
  'POST → 201 at client',
  'POST → workflow started',
  'workflow started → first workflow task started',
  'first workflow task (+ loadTurn unless set up by the POST)',
  'first workflow task completed → callModel started',
  'callModel started → first delta at client',
  'first delta at client → callModel completed',
  'callModel completed → message at client (saveReply)',
] as const;

/** Where the turns' time went: each phase's durations, from their Temporal histories. */
export async function phasesOf(harness: TurnsHarness, turns: Sample[]) {
  const phases = new Map<string, number[]>(PHASES.map((n) => [n, []]));
  for (const sample of turns) {
    const t = sample.trace!;
    const history = await harness.deps.temporal.client.workflow
      .getHandle(workflowIds.turn(harness.orgId, t.conversationId, t.requestId))
      .fetchHistory();
    let started = NaN;
    let taskStarted = NaN;
    let taskCompleted = NaN;
    const acts = new Map<string, { name: string; started: number; completed: number }>();
    for (const e of history.events ?? []) {
      const at = tsToMs(e.eventTime);
      if (e.workflowExecutionStartedEventAttributes) started = at;
      if (e.workflowTaskStartedEventAttributes && Number.isNaN(taskStarted)) taskStarted = at;
      if (e.workflowTaskCompletedEventAttributes && Number.isNaN(taskCompleted)) taskCompleted = at;
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled)
        acts.set(String(e.eventId), {
          name: scheduled.activityType?.name ?? '?',
          started: NaN,
          completed: NaN,
        });
      const s = e.activityTaskStartedEventAttributes;
      const a = s && acts.get(String(s.scheduledEventId));
      if (a) a.started = at;
      const c = e.activityTaskCompletedEventAttributes;
      const b = c && acts.get(String(c.scheduledEventId));
      if (b) b.completed = at;
    }
    const call = [...acts.values()].find((x) => x.name === 'callModel') ?? { started: NaN, completed: NaN };
    const values = [
      sample.posted!,
      started - t.t0,
      taskStarted - started,
      taskCompleted - taskStarted,
      call.started - taskCompleted,
      t.first - call.started,
      call.completed - t.first,
      t.final - call.completed,
    ];
    PHASES.forEach((n, i) => phases.get(n)!.push(values[i]!));
  }
  return phases;
}
