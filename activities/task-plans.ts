import type { CancelledPlans } from '@contracts';
import type { TaskPlansService } from '@lib/task-plans/task-plans.service';

export interface TaskPlanActivityDeps {
  taskPlans: Pick<TaskPlansService, 'stepUnderWay' | 'endStepsUnderWay'>;
}

/** What a turn asks about the plans cancelled while it ran (workflows/turn.ts). */
export function createTaskPlanActivities(deps: TaskPlanActivityDeps) {
  return {
    /** Whether a cancelled plan's step is still in progress: the turn goes on until it finishes. */
    async cancelledPlanStepUnderWay(input: CancelledPlans): Promise<boolean> {
      return deps.taskPlans.stepUnderWay(input.organizationId, input.planIds);
    },

    /** The turn has ended: the steps it left in progress will not finish. */
    async endCancelledPlanSteps(input: CancelledPlans): Promise<void> {
      await deps.taskPlans.endStepsUnderWay(input.organizationId, input.planIds);
    },
  };
}
