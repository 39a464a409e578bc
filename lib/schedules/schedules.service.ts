import type { RequestContext } from '@lib/auth/context';
import { notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { HandlerRunsService } from '@lib/triggers/handler-runs.service';
import { checkCron, nextFire } from './cron';
import type { ScheduleSync } from './schedule-sync';
import type { SchedulesStore } from './store';
import { toTriggerView } from './views';

export interface ScheduleBody {
  name: string;
  description?: string;
  cronExpression: string;
  confirmHighFrequency?: boolean;
}

export interface ScheduleListQuery extends PageRequest {
  actionChainId?: string;
  agentId?: string;
  workflowId?: string;
}

/** Schedule triggers (admins and owners): each record drives one Temporal Schedule (see ScheduleSync). */
export class SchedulesService {
  constructor(
    private readonly repos: Tenants<SchedulesStore>,
    private readonly sync: ScheduleSync,
    private readonly handlerRuns: Pick<HandlerRunsService, 'latest'>,
  ) {}

  private triggers(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).scheduleTriggers;
  }

  async trigger(ctx: RequestContext, triggerId: string) {
    const trigger = await this.triggers(ctx).get(triggerId);
    if (!trigger) throw notFound('schedule');
    return trigger;
  }

  private fields(body: ScheduleBody) {
    const confirmHighFrequency = body.confirmHighFrequency ?? false;
    checkCron(body.cronExpression, confirmHighFrequency);
    return {
      name: body.name,
      description: body.description ?? '',
      cronExpression: body.cronExpression.trim().split(/\s+/).join(' '),
      confirmHighFrequency,
    };
  }

  /** Triggers with a handler that runs the given agent, chain or workflow (all given must hold). */
  private async filteredIds(ctx: RequestContext, q: ScheduleListQuery): Promise<string[] | undefined> {
    const handlers = this.repos.tenant(ctx.organizationId).scheduleHandlers;
    let ids: string[] | undefined;
    for (const key of ['actionChainId', 'agentId', 'workflowId'] as const) {
      const value = q[key];
      if (value === undefined) continue;
      const found = await handlers.triggerIdsFor({ [key]: value });
      ids = ids ? ids.filter((id) => found.includes(id)) : found;
    }
    return ids;
  }

  async list(ctx: RequestContext, q: ScheduleListQuery) {
    const ids = await this.filteredIds(ctx, q);
    const { items, total } = await this.triggers(ctx).list(q, ids);
    return page(items.map(toTriggerView), total, q.offset);
  }

  async create(ctx: RequestContext, body: ScheduleBody) {
    const trigger = await this.triggers(ctx).create(newId('sch'), ctx.userId, this.fields(body));
    await this.sync.trySync(ctx.organizationId, trigger._id);
    return toTriggerView(trigger);
  }

  async get(ctx: RequestContext, triggerId: string) {
    return toTriggerView(await this.trigger(ctx, triggerId));
  }

  /** Changes the trigger and its Schedule in place (same Schedule id, its history kept). An omitted description
   * keeps the stored one (docs/architecture.md "API conventions"); confirmHighFrequency is a confirmation each write gives again. */
  async update(ctx: RequestContext, triggerId: string, body: ScheduleBody) {
    const stored = await this.trigger(ctx, triggerId);
    const fields = this.fields({ ...body, description: body.description ?? stored.description });
    const trigger = await this.triggers(ctx).update(triggerId, fields);
    if (!trigger) throw notFound('schedule');
    await this.sync.trySync(ctx.organizationId, triggerId);
    return toTriggerView(trigger);
  }

  /** Deletes the trigger: its Schedule, then its handlers and run records (the reconciler finishes what an
   * outage interrupts; meanwhile the trigger is gone for every reader and a fire runs nothing). */
  async remove(ctx: RequestContext, triggerId: string) {
    if (!(await this.triggers(ctx).markDeleted(triggerId))) throw notFound('schedule');
    await this.sync.trySync(ctx.organizationId, triggerId);
    return { success: true as const };
  }

  /** The next fire, the most recent handler execution, and whether fires are still starting handlers. */
  async runs(ctx: RequestContext, triggerId: string) {
    const trigger = await this.trigger(ctx, triggerId);
    const [lastRun, running] = await Promise.all([
      this.handlerRuns.latest(ctx.organizationId, triggerId),
      this.sync.runningFires(ctx.organizationId, triggerId),
    ]);
    return {
      nextRun: nextFire(trigger.cronExpression, new Date())?.toISOString() ?? null,
      lastRun: lastRun && {
        handlerId: lastRun.handlerId,
        handlerType: lastRun.handlerType,
        runId: lastRun.runId,
        status: lastRun.status,
        statusMessage: lastRun.statusMessage,
        startedAt: lastRun.startedAt,
        endedAt: lastRun.endedAt,
      },
      // A fire whose handlers are not all started and recorded yet (no worker took it so far), or Temporal could
      // not be asked: runs may exist that lastRun does not show.
      hasUntrackedWorkflowRuns: running === null || running > 0,
    };
  }
}
