import type { RequestContext } from '@lib/auth/context';
import { badRequest, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { HandlerTargets } from '@lib/triggers/handler-targets';
import type { ScheduleHandlerDoc, ScheduleHandlerType } from './schedule-handler.schema';
import type { ScheduleHandlerFields } from './schedule-handlers.repository';
import type { SchedulesService } from './schedules.service';
import type { SchedulesStore } from './store';
import { toScheduleHandlerView } from './views';

export interface ScheduleHandlerBody {
  handlerType: ScheduleHandlerType;
  instructions: string;
  agentId?: string | null;
  actionChainId?: string | null;
  workflowId?: string | null;
  inputMapping?: Record<string, string> | null;
}

/** The id field each handler type runs, and the ones it must not carry. */
const TARGET_FIELD = {
  agent: 'agentId',
  'action-chain': 'actionChainId',
  workflow: 'workflowId',
} as const satisfies Record<ScheduleHandlerType, keyof ScheduleHandlerBody>;

/** Handlers of schedule triggers: what runs when a trigger fires. */
export class ScheduleHandlersService {
  constructor(
    private readonly repos: Tenants<SchedulesStore>,
    private readonly schedules: SchedulesService,
    private readonly targets: HandlerTargets,
  ) {}

  private handlers(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).scheduleHandlers;
  }

  private async views(ctx: RequestContext, handlers: ScheduleHandlerDoc[]) {
    const names = await this.targets.names(ctx.organizationId, handlers);
    return handlers.map((h) => toScheduleHandlerView(h, names));
  }

  /** The target id of a body; 400 when it is missing or the body names another type's target. */
  private target(body: ScheduleHandlerBody): string {
    const field = TARGET_FIELD[body.handlerType];
    const id = body[field];
    if (!id) throw badRequest(`a '${body.handlerType}' handler needs ${field}`);
    for (const other of Object.values(TARGET_FIELD))
      if (other !== field && body[other])
        throw badRequest(`a '${body.handlerType}' handler takes ${field}, not ${other}`);
    return id;
  }

  async list(ctx: RequestContext, triggerId: string, q: PageRequest) {
    await this.schedules.trigger(ctx, triggerId);
    const { items, total } = await this.handlers(ctx).list(triggerId, q);
    return page(await this.views(ctx, items), total, q.offset);
  }

  private async handler(ctx: RequestContext, triggerId: string, handlerId: string) {
    await this.schedules.trigger(ctx, triggerId);
    const handler = await this.handlers(ctx).get(triggerId, handlerId);
    if (!handler) throw notFound('schedule handler');
    return handler;
  }

  async get(ctx: RequestContext, triggerId: string, handlerId: string) {
    return (await this.views(ctx, [await this.handler(ctx, triggerId, handlerId)]))[0]!;
  }

  async create(ctx: RequestContext, triggerId: string, body: ScheduleHandlerBody) {
    await this.schedules.trigger(ctx, triggerId);
    const id = this.target(body);
    if (body.handlerType === 'agent') await this.targets.checkAgent(ctx, id);
    else await this.targets.checkChain(ctx, TARGET_FIELD[body.handlerType], id);
    const fields: ScheduleHandlerFields = {
      handlerType: body.handlerType,
      agentId: body.handlerType === 'agent' ? id : null,
      actionChainId: body.handlerType === 'action-chain' ? id : null,
      workflowId: body.handlerType === 'workflow' ? id : null,
      instructions: body.instructions,
      inputMappingJson: body.inputMapping ? JSON.stringify(body.inputMapping) : null,
    };
    const handler = await this.handlers(ctx).create(newId('shd'), triggerId, ctx.userId, fields);
    return (await this.views(ctx, [handler]))[0]!;
  }

  /** Stores instructions and inputMapping only; the type and target sent must be the handler's own. */
  async update(ctx: RequestContext, triggerId: string, handlerId: string, body: ScheduleHandlerBody) {
    const existing = await this.handler(ctx, triggerId, handlerId);
    const id = this.target(body);
    const field = TARGET_FIELD[body.handlerType];
    if (existing.handlerType !== body.handlerType || existing[field] !== id)
      throw badRequest(
        `a handler's type and target cannot change: this is a '${existing.handlerType}' handler of ` +
          `${existing[TARGET_FIELD[existing.handlerType]]}; create a new handler instead`,
      );
    // An omitted inputMapping keeps the stored one (docs/architecture.md "API conventions"); null clears it.
    const handler = await this.handlers(ctx).update(triggerId, handlerId, {
      instructions: body.instructions,
      ...(body.inputMapping !== undefined
        ? { inputMappingJson: body.inputMapping ? JSON.stringify(body.inputMapping) : null }
        : {}),
    });
    if (!handler) throw notFound('schedule handler');
    return (await this.views(ctx, [handler]))[0]!;
  }

  async remove(ctx: RequestContext, triggerId: string, handlerId: string) {
    await this.schedules.trigger(ctx, triggerId);
    if (!(await this.handlers(ctx).remove(triggerId, handlerId))) throw notFound('schedule handler');
    return { success: true as const };
  }
}
