import { TenantRepository } from '@lib/db/tenant-repository';
import { pickView } from '@lib/db/view';
import type { PlanStatus, PlanStep, PlanType } from './task-plan-rules';
import { taskPlanModel, type TaskPlanDoc } from './task-plan.schema';

export function toTaskPlanView(p: TaskPlanDoc) {
  return {
    planId: p._id,
    ...pickView(p, ['conversationId', 'organizationId', 'agentId', 'type', 'status', 'requestId']),
    steps: p.steps.map((s) => ({ stepId: s.stepId, description: s.description, status: s.status })),
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}
export type TaskPlanView = ReturnType<typeof toTaskPlanView>;

/** Task plans of one organization; every query is scoped to it. */
export class TaskPlansRepository extends TenantRepository {
  private readonly model = this.db.model(taskPlanModel);

  async create(
    planId: string,
    fields: { conversationId: string; agentId: string; type: PlanType; requestId: string; steps: PlanStep[] },
    status: PlanStatus,
  ): Promise<TaskPlanDoc> {
    const doc = await this.model.create({
      ...fields,
      _id: planId,
      organizationId: this.organizationId,
      status,
      revision: 0,
    });
    return doc.toObject();
  }

  get(planId: string) {
    return this.findOwned(this.model, planId);
  }

  /** Active plans of a conversation, oldest first. */
  listActive(conversationId: string) {
    return this.model
      .find(this.scope<TaskPlanDoc>({ conversationId, status: 'active' }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<TaskPlanDoc[]>();
  }

  /**
   * Writes a change computed from `read` only while the plan is unchanged since that read (its status and
   * revision): a cancel arriving meanwhile wins, and two writers never lose each other's steps. Null when the
   * plan moved on; the caller reads it again.
   */
  replaceIfUnchanged(read: TaskPlanDoc, set: { steps: PlanStep[]; status: PlanStatus; requestId?: string }) {
    return this.model
      .findOneAndUpdate(
        { _id: read._id, organizationId: this.organizationId, status: read.status, revision: read.revision },
        { $set: set, $inc: { revision: 1 } },
        { new: true },
      )
      .lean<TaskPlanDoc>();
  }

  async removeForConversation(conversationId: string) {
    await this.model.deleteMany(this.scope<TaskPlanDoc>({ conversationId }));
  }
}
