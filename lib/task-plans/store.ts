import type { TaskPlansRepository } from './task-plans.repository';

/** The task-plans feature's own collection, for one organization. */
export interface TaskPlansStore {
  taskPlans: TaskPlansRepository;
}
