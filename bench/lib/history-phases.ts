import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';

const E = temporal.api.enums.v1.EventType;

/** Where a workflow's time went, from its history, in ms: waiting in Temporal's queues or running on the worker. */
export interface Phases {
  /** Workflow tasks: scheduled → picked up by a worker (the task queue's wait). */
  workflowTaskWait: number;
  /** Workflow tasks: picked up → completed (the worker's run of workflow code and its local activities). */
  workflowTaskRun: number;
  /** Activities: scheduled → picked up. */
  activityWait: number;
  /** Activities: picked up → completed. */
  activityRun: number;
  /** The rest of start → close (server work between tasks). */
  other: number;
}

type EventType = temporal.api.enums.v1.EventType;
const PAIRS: Array<[keyof Phases, EventType, EventType]> = [
  ['workflowTaskWait', E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, E.EVENT_TYPE_WORKFLOW_TASK_STARTED],
  ['workflowTaskRun', E.EVENT_TYPE_WORKFLOW_TASK_STARTED, E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED],
  ['activityWait', E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, E.EVENT_TYPE_ACTIVITY_TASK_STARTED],
  ['activityRun', E.EVENT_TYPE_ACTIVITY_TASK_STARTED, E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED],
];

/** The phases of one closed workflow. Activities are paired by their scheduled event id. */
export async function phasesOf(client: Client, workflowId: string): Promise<Phases> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const time = (e: (typeof events)[number]) => tsToMs(e.eventTime);
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const phases: Phases = {
    workflowTaskWait: 0,
    workflowTaskRun: 0,
    activityWait: 0,
    activityRun: 0,
    other: 0,
  };
  for (const e of events) {
    const a = e.activityTaskStartedEventAttributes ?? e.activityTaskCompletedEventAttributes;
    const w = e.workflowTaskStartedEventAttributes ?? e.workflowTaskCompletedEventAttributes;
    const from = a
      ? e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_STARTED
        ? byId.get(Number(a.scheduledEventId))
        : byId.get(Number(e.activityTaskCompletedEventAttributes!.startedEventId))
      : w
        ? e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED
          ? byId.get(Number(w.scheduledEventId))
          : byId.get(Number(e.workflowTaskCompletedEventAttributes!.startedEventId))
        : undefined;
    if (!from) continue;
    const pair = PAIRS.find(([, f, t]) => f === from.eventType && t === e.eventType);
    if (pair) phases[pair[0]] += time(e) - time(from);
  }
  const total = events.length ? time(events[events.length - 1]!) - time(events[0]!) : 0;
  phases.other = total - PAIRS.reduce((s, [k]) => s + phases[k], 0);
  return phases;
}

/** The median of each phase over several workflows, as one line. */
export function medianPhases(all: Phases[]): string {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const keys = Object.keys(all[0] ?? {}) as Array<keyof Phases>;
  return keys.map((k) => `${k} ${median(all.map((p) => p[k])).toFixed(0)} ms`).join(', ');
}
