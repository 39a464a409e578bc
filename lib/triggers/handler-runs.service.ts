import type { Tenants } from '@lib/db/tenants';
import { describeHandlerRun, type HandlerRunView, type StartedWork } from './run-status';
import type { TriggersStore } from './store';

/**
 * The executions of schedule and webhook handlers, as their schedules and webhooks show and delete them
 * (TriggerHandlers writes them).
 */
export class HandlerRunsService {
  constructor(
    private readonly repos: Tenants<TriggersStore>,
    private readonly started: StartedWork,
  ) {}

  /** The most recent execution of a schedule's or webhook's handlers, with how it is doing; null when none. */
  async latest(organizationId: string, parentId: string): Promise<HandlerRunView | null> {
    const run = await this.repos.tenant(organizationId).handlerRuns.latest(parentId);
    return run ? describeHandlerRun(this.started, run) : null;
  }

  /** The executions of one fire or delivery, each with how it is doing. */
  async forEvent(organizationId: string, parentId: string, eventKey: string): Promise<HandlerRunView[]> {
    const runs = await this.repos.tenant(organizationId).handlerRuns.forEvent(parentId, eventKey);
    return Promise.all(runs.map((r) => describeHandlerRun(this.started, r)));
  }

  /** A deleted schedule's or webhook's execution records go with it. */
  removeFor(organizationId: string, parentId: string): Promise<void> {
    return this.repos.tenant(organizationId).handlerRuns.removeFor(parentId);
  }
}
