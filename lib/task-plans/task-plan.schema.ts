import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';
import { PLAN_STATUSES, PLAN_TYPES, STEP_STATUSES } from './task-plan-rules';

const stepSchema = new Schema(
  {
    stepId: { type: String, required: true },
    description: { type: String, required: true },
    status: { type: String, enum: STEP_STATUSES, required: true },
  },
  { _id: false },
);

/** A plan an agent keeps while it works through a task in a conversation (see task-plan-rules.ts). */
export const taskPlanSchema = new Schema(
  {
    /** The planId (`tpl_…`). */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    conversationId: { type: String, required: true },
    agentId: { type: String, required: true },
    type: { type: String, enum: PLAN_TYPES, required: true },
    status: { type: String, enum: PLAN_STATUSES, required: true },
    steps: { type: [stepSchema], default: [] },
    /** The turn that last wrote the plan: the one a cancel signals. */
    requestId: { type: String, required: true },
    /** Goes up with every write: a change computed from an older read is refused (see the repository). */
    revision: { type: Number, default: 0 },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the active plans of a conversation (GET task-plans) and the removal with a conversation.
taskPlanSchema.index({ organizationId: 1, conversationId: 1, status: 1 });

export type TaskPlanDoc = DocOf<typeof taskPlanSchema>;
export const taskPlanModel = defineModel('TaskPlan', 'task_plans', taskPlanSchema);
