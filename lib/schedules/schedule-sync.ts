import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, type Duration } from '@temporalio/common';
import {
  searchAttributePairs,
  WORKFLOWS,
  workflowIds,
  type ScheduleFireInput,
  type ScheduleFireWorkflow,
} from '@contracts';
import type { Logger } from '@lib/logger';
import type { Tenants } from '@lib/db/tenants';
import type { TemporalDeps } from '@lib/temporal/client';
import type { HandlerRunsService } from '@lib/triggers/handler-runs.service';
import { parseCron, temporalCronStrings } from './cron';
import type { ScheduleTriggerDoc } from './schedule-trigger.schema';
import type { SchedulesStore } from './store';

/**
 * What a fire that is still running does to the next one: it is buffered (one at most; more are dropped). A fire
 * only starts its handlers' workflows and ends, so fires overlap only while no worker takes them; then the fire
 * that is due waits, one more queues behind it, and the ones after are skipped instead of piling up.
 */
export const SCHEDULE_OVERLAP_POLICY = ScheduleOverlapPolicy.BUFFER_ONE;

/** How long a missed fire (Temporal itself was down) is still taken late. */
export const SCHEDULE_CATCHUP_WINDOW: Duration = '10 minutes';

/** How long one sync may wait for Temporal before the reconciler is left to finish it. */
const SYNC_DEADLINE_MS = 10_000;
const NOTE = /^revision (\d+)$/;
/** How many milliseconds a fire asked now tries for an id no other fire asked now has. */
const FIRE_NOW_TRIES = 10;
/** The most recent fires the runs summary looks at for ones still running. */
const RECENT_FIRES_CHECKED = 3;

function appliedRevision(description: ScheduleDescription | null): number | null {
  const m = NOTE.exec(description?.state.note ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * Keeps each trigger's Temporal Schedule equal to its record. The record is written first (a new revision, with
 * syncPending); `sync` then creates, updates or deletes the Schedule, stamps the revision on it (its note), reads
 * both back, and clears syncPending only when they agree: a sync that loses a race with a newer one sees the
 * newer revision and applies it again. Any sync that cannot finish (Temporal down, the process dies) leaves
 * syncPending set, and the reconciler (`reconcileSchedulesWorkflow`, every minute) finishes it.
 */
export class ScheduleSync {
  constructor(
    private readonly repos: Tenants<SchedulesStore>,
    private readonly handlerRuns: Pick<HandlerRunsService, 'removeFor'>,
    private readonly temporal: TemporalDeps,
    private readonly logger: Logger,
  ) {}

  private handle(organizationId: string, triggerId: string): ScheduleHandle {
    return this.temporal.client.schedule.getHandle(workflowIds.schedule(organizationId, triggerId));
  }

  private async describe(handle: ScheduleHandle) {
    try {
      return await handle.describe();
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return null;
      throw err;
    }
  }

  private options(t: ScheduleTriggerDoc) {
    const action: ScheduleOptionsStartWorkflowAction<ScheduleFireWorkflow> = {
      type: 'startWorkflow',
      workflowType: WORKFLOWS.scheduleFire,
      workflowId: workflowIds.scheduleFire(t.organizationId, t._id),
      taskQueue: this.temporal.taskQueue,
      args: [{ organizationId: t.organizationId, triggerId: t._id } satisfies ScheduleFireInput],
      // Every fire carries its organization and trigger (the trigger handlers it starts inherit them).
      typedSearchAttributes: searchAttributePairs({ organizationId: t.organizationId, triggerId: t._id }),
    };
    return {
      spec: { cronExpressions: temporalCronStrings(parseCron(t.cronExpression)), timezone: 'UTC' },
      action,
      policies: { overlap: SCHEDULE_OVERLAP_POLICY, catchupWindow: SCHEDULE_CATCHUP_WINDOW },
      state: { note: `revision ${t.revision}` },
    };
  }

  /** Applies the trigger's record to its Schedule; true when they agree (or both are gone). */
  async sync(organizationId: string, triggerId: string): Promise<boolean> {
    const triggers = this.repos.tenant(organizationId).scheduleTriggers;
    const handle = this.handle(organizationId, triggerId);
    for (let round = 0; round < 5; round++) {
      const record = await triggers.getIncludingDeleted(triggerId);
      if (!record || record.deletedAt) {
        await handle.delete().catch((err: unknown) => {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        });
        if (record) await this.purge(organizationId, triggerId);
        return true;
      }
      const current = await this.describe(handle);
      const applied = appliedRevision(current);
      if (!current) {
        try {
          await this.temporal.client.schedule.create({
            scheduleId: handle.scheduleId,
            ...this.options(record),
            memo: { organizationId, triggerId },
            typedSearchAttributes: searchAttributePairs({ organizationId, triggerId }),
          });
        } catch (err) {
          if (!(err instanceof ScheduleAlreadyRunning)) throw err;
          continue;
        }
      } else if (applied === null || applied < record.revision) {
        await handle.update(() => this.options(record));
      }
      const [after, latest] = await Promise.all([
        this.describe(handle),
        triggers.getIncludingDeleted(triggerId),
      ]);
      if (latest && !latest.deletedAt && appliedRevision(after) === latest.revision) {
        if (await triggers.markSynced(triggerId, latest.revision)) return true;
      }
    }
    return false;
  }

  /**
   * Fires the trigger now (operators: `cli schedule fire`): the fire's workflow, started as its own, named by the
   * time it was asked to the millisecond. Not the Schedule's trigger(): Temporal names a Schedule's fire by its
   * time to the second, so a fire asked in the same second as another (the cron's, or a second one asked now) was
   * dropped while the other ran, or ran again under its id and started no handler. Null when the organization
   * has no such trigger.
   */
  async fireNow(organizationId: string, triggerId: string): Promise<{ triggerId: string } | null> {
    const record = await this.repos.tenant(organizationId).scheduleTriggers.get(triggerId);
    if (!record) return null;
    // Two asked in the same millisecond: the second takes the next one.
    for (let at = Date.now(), tries = 0; ; at++, tries++) {
      try {
        await this.temporal.client.workflow.start<ScheduleFireWorkflow>(WORKFLOWS.scheduleFire, {
          workflowId: workflowIds.scheduleFireNow(organizationId, triggerId, new Date(at)),
          taskQueue: this.temporal.taskQueue,
          args: [{ organizationId, triggerId }],
          typedSearchAttributes: searchAttributePairs({ organizationId, triggerId }),
        });
        return { triggerId };
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError) || tries >= FIRE_NOW_TRIES) throw err;
      }
    }
  }

  /** `sync`, bounded in time, never throwing: what it cannot finish the reconciler will. */
  async trySync(organizationId: string, triggerId: string): Promise<boolean> {
    try {
      return await this.temporal.connection.withDeadline(Date.now() + SYNC_DEADLINE_MS, () =>
        this.sync(organizationId, triggerId),
      );
    } catch (err) {
      this.logger.warn(
        { err, organizationId, triggerId },
        'schedule sync failed; the reconciler will apply it',
      );
      return false;
    }
  }

  /** A deleted trigger whose Schedule is gone: its handlers, its run records, then the tombstone. */
  private async purge(organizationId: string, triggerId: string) {
    const tenant = this.repos.tenant(organizationId);
    await tenant.scheduleHandlers.removeForTrigger(triggerId);
    await this.handlerRuns.removeFor(organizationId, triggerId);
    await tenant.scheduleTriggers.purge(triggerId);
  }

  /** How many of the trigger's recent fires, and of the fires asked now, are still running (started, their
   * handlers not all started yet: no worker took them so far); null when Temporal cannot say. */
  async runningFires(organizationId: string, triggerId: string): Promise<number | null> {
    try {
      return await this.temporal.connection.withDeadline(Date.now() + SYNC_DEADLINE_MS, async () => {
        const d = await this.describe(this.handle(organizationId, triggerId));
        const recent = (d?.info.recentActions ?? []).slice(-RECENT_FIRES_CHECKED);
        const states = await Promise.all(
          recent.map(({ action }) =>
            this.temporal.client.workflow
              .getHandle(action.workflow.workflowId, action.workflow.firstExecutionRunId)
              .describe(),
          ),
        );
        const prefix = workflowIds.scheduleFireNowPrefix(organizationId, triggerId);
        const { count: askedNow } = await this.temporal.client.workflow.count(
          `WorkflowId STARTS_WITH '${prefix}' AND ExecutionStatus = 'Running'`,
        );
        return states.filter((w) => w.status.name === 'RUNNING').length + askedNow;
      });
    } catch {
      return null;
    }
  }
}
