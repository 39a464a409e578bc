import { WorkflowNotFoundError } from '@temporalio/client';
import { cancelTaskPlanSignal, workflowIds, type EventTarget } from '@contracts';
import type { RequestContext } from '@lib/auth/context';
import { conflict, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import type { Tenants } from '@lib/db/tenants';
import type { TemporalDeps } from '@lib/temporal/client';
import {
  cancelSteps,
  endStepsUnderWay,
  finishSteps,
  mergeSteps,
  newSteps,
  parsePlanArgs,
  PlanInputError,
  statusAfterWrite,
} from './task-plan-rules';
import type { TaskPlanDoc } from './task-plan.schema';
import { toTaskPlanView, type TaskPlanView } from './task-plans.repository';
import type { TaskPlansStore } from './store';

/** The turn a planning tool call comes from. */
export interface PlanningTurn {
  organizationId: string;
  agentId: string;
  conversationId: string;
  requestId: string;
}

/** How often a write is computed again when the plan changed between read and write. */
const WRITE_ATTEMPTS = 5;

/** Plan events go to the conversation's creator. */
const planTarget = (organizationId: string, conversationId: string, creatorUserId: string): EventTarget => ({
  organizationId,
  conversationId,
  userId: creatorUserId,
});

/**
 * The plan's conversation: `load` if the caller may see it (not-found otherwise), `find` for a turn or a
 * workflow, which checked access when it started. Conversations use the tools and task plans sit below them
 * (the planning tool), so the service is handed this port (lib/services.ts) rather than importing the
 * conversations feature.
 */
export interface ConversationAccess {
  load(ctx: RequestContext, conversationId: string): Promise<{ creatorUserId: string }>;
  find(
    organizationId: string,
    conversationId: string,
  ): Promise<{ creatorUserId: string; isBrowserTask: boolean } | null>;
}

export class TaskPlansService {
  constructor(
    private readonly repos: Tenants<TaskPlansStore>,
    private readonly conversations: ConversationAccess,
    private readonly temporal: TemporalDeps,
    private readonly realtime: Pick<RealtimeEmitter, 'emit'>,
  ) {}

  private emit(target: EventTarget, type: 'created' | 'updated' | 'cancelled', plan: TaskPlanView) {
    this.realtime.emit('task-plan', target, { type, requestId: plan.requestId, plan });
  }

  private async plan(ctx: RequestContext, conversationId: string, planId: string): Promise<TaskPlanDoc> {
    const plan = await this.repos.tenant(ctx.organizationId).taskPlans.get(planId);
    if (!plan || plan.conversationId !== conversationId) throw notFound('task plan');
    return plan;
  }

  /** The conversation's active plans (general and browser), oldest first. */
  async listActive(ctx: RequestContext, conversationId: string) {
    await this.conversations.load(ctx, conversationId);
    const plans = await this.repos.tenant(ctx.organizationId).taskPlans.listActive(conversationId);
    return plans.map(toTaskPlanView);
  }

  async get(ctx: RequestContext, conversationId: string, planId: string) {
    await this.conversations.load(ctx, conversationId);
    return toTaskPlanView(await this.plan(ctx, conversationId, planId));
  }

  /**
   * Cancels an active plan at once (its pending steps with it) and signals the turn that last worked on it, which
   * lets the step in progress finish and starts no other (task-plan-rules.ts). With no turn running, nothing will
   * finish that step: it is cancelled too. Cancelling a cancelled plan again succeeds; a completed or failed plan
   * answers success false (the spec's `{ success, message, planId }` for every plan).
   */
  async cancel(ctx: RequestContext, conversationId: string, planId: string) {
    const conversation = await this.conversations.load(ctx, conversationId);
    const repo = this.repos.tenant(ctx.organizationId).taskPlans;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const plan = await this.plan(ctx, conversationId, planId);
      if (plan.status === 'cancelled')
        return { success: true, message: 'the plan was already cancelled', planId };
      if (plan.status !== 'active')
        return {
          success: false,
          message: `the plan is already ${plan.status}; only an active plan can be cancelled`,
          planId,
        };
      const cancelled = await repo.replaceIfUnchanged(plan, {
        status: 'cancelled',
        steps: cancelSteps(plan.steps),
      });
      if (!cancelled) continue;
      const target = planTarget(ctx.organizationId, conversationId, conversation.creatorUserId);
      this.emit(target, 'cancelled', toTaskPlanView(cancelled));
      const stopping = await this.signalTurn(ctx.organizationId, conversationId, cancelled);
      if (!stopping) await this.endStepsUnderWay(ctx.organizationId, [planId]);
      return {
        success: true,
        message: stopping
          ? 'the plan is cancelled; the agent stops after its current task'
          : 'the plan is cancelled; no turn was working on it',
        planId,
      };
    }
    throw conflict('the plan keeps changing; try again');
  }

  /** True when the turn was running and got the signal. */
  private async signalTurn(organizationId: string, conversationId: string, plan: TaskPlanDoc) {
    const handle = this.temporal.client.workflow.getHandle(
      workflowIds.turn(organizationId, conversationId, plan.requestId),
    );
    try {
      await handle.signal(cancelTaskPlanSignal, { planId: plan._id });
      return true;
    } catch (err) {
      // The turn has ended: nothing is running to stop.
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /** Whether any of these plans is cancelled with a step still in progress (the turn lets it finish). */
  async stepUnderWay(organizationId: string, planIds: string[]): Promise<boolean> {
    const repo = this.repos.tenant(organizationId).taskPlans;
    const plans = await Promise.all(planIds.map((planId) => repo.get(planId)));
    return plans.some((p) => p?.status === 'cancelled' && p.steps.some((s) => s.status === 'in_progress'));
  }

  /** Cancels the steps still in progress of these cancelled plans: the turn that could finish them has ended. */
  async endStepsUnderWay(organizationId: string, planIds: string[]): Promise<void> {
    const tenant = this.repos.tenant(organizationId);
    for (const planId of planIds) {
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
        const plan = await tenant.taskPlans.get(planId);
        if (plan?.status !== 'cancelled' || !plan.steps.some((s) => s.status === 'in_progress')) break;
        const ended = await tenant.taskPlans.replaceIfUnchanged(plan, {
          steps: endStepsUnderWay(plan.steps),
          status: 'cancelled',
        });
        if (!ended) continue;
        const conversation = await this.conversations.find(organizationId, plan.conversationId);
        const target =
          conversation && planTarget(organizationId, plan.conversationId, conversation.creatorUserId);
        if (target) this.emit(target, 'updated', toTaskPlanView(ended));
        break;
      }
    }
  }

  /**
   * The planning tool: creates a plan (no planId) or changes one of this conversation. Bad arguments, an
   * unknown plan and a plan that is no longer active are PlanInputErrors, told to the model.
   */
  async writeFromTool(turn: PlanningTurn, args: Record<string, unknown>): Promise<TaskPlanView> {
    const input = parsePlanArgs(args);
    const tenant = this.repos.tenant(turn.organizationId);
    const conversation = await this.conversations.find(turn.organizationId, turn.conversationId);
    if (!conversation) throw new PlanInputError('the conversation no longer exists');
    const target = planTarget(turn.organizationId, turn.conversationId, conversation.creatorUserId);
    if (!input.planId) {
      const steps = newSteps(input.steps);
      const created = await tenant.taskPlans.create(
        newId('tpl'),
        {
          conversationId: turn.conversationId,
          agentId: turn.agentId,
          type: input.type ?? (conversation.isBrowserTask ? 'browser' : 'general'),
          requestId: turn.requestId,
          steps,
        },
        statusAfterWrite(steps, input.status),
      );
      const view = toTaskPlanView(created);
      this.emit(target, 'created', view);
      return view;
    }
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const plan = await tenant.taskPlans.get(input.planId);
      if (!plan || plan.conversationId !== turn.conversationId)
        throw new PlanInputError(`there is no plan ${input.planId} in this conversation`);
      // A cancelled plan's step in progress may still finish; nothing else of a plan that ended changes.
      const finishing = plan.status === 'cancelled' && !input.status;
      if (plan.status !== 'active' && !finishing)
        throw new PlanInputError(
          `the plan is ${plan.status} and can no longer change; make a new plan if there is more to do`,
        );
      if (input.type && input.type !== plan.type)
        throw new PlanInputError(`the plan's type is ${plan.type}; it cannot change`);
      const steps = finishing ? finishSteps(plan.steps, input.steps) : mergeSteps(plan.steps, input.steps);
      const updated = await tenant.taskPlans.replaceIfUnchanged(plan, {
        steps,
        status: finishing ? 'cancelled' : statusAfterWrite(steps, input.status),
        requestId: turn.requestId,
      });
      if (!updated) continue;
      const view = toTaskPlanView(updated);
      this.emit(target, 'updated', view);
      return view;
    }
    throw new Error('the plan kept changing while it was being written');
  }

  /** The plans of a deleted conversation go with it. */
  async removeForConversation(organizationId: string, conversationId: string): Promise<void> {
    await this.repos.tenant(organizationId).taskPlans.removeForConversation(conversationId);
  }
}
