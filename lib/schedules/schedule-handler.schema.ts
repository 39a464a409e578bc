import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const SCHEDULE_HANDLER_TYPES = ['agent', 'action-chain', 'workflow'] as const;
export type ScheduleHandlerType = (typeof SCHEDULE_HANDLER_TYPES)[number];

/** What runs when a trigger fires. Type and target are fixed at creation; instructions and inputMapping change. */
export const scheduleHandlerSchema = new Schema(
  {
    /** The handlerId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    triggerId: { type: String, required: true },
    handlerType: { type: String, enum: SCHEDULE_HANDLER_TYPES, required: true },
    agentId: { type: String, default: null },
    actionChainId: { type: String, default: null },
    workflowId: { type: String, default: null },
    instructions: { type: String, required: true },
    /** flat string-to-string map as JSON text (keys are the sender's: any characters) */
    inputMappingJson: { type: String, default: null },
    /** whose rights the handler's runs use */
    creatorUserId: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: a trigger's handlers in creation order (list, and the handlers a fire runs).
scheduleHandlerSchema.index({ organizationId: 1, triggerId: 1, createdAt: 1 });
// Serves: the schedule list filtered by the agent, chain or workflow a handler runs.
scheduleHandlerSchema.index({ organizationId: 1, agentId: 1 });
scheduleHandlerSchema.index({ organizationId: 1, actionChainId: 1 });
scheduleHandlerSchema.index({ organizationId: 1, workflowId: 1 });

export type ScheduleHandlerDoc = DocOf<typeof scheduleHandlerSchema>;
export const scheduleHandlerModel = defineModel(
  'ScheduleHandler',
  'schedule_handlers',
  scheduleHandlerSchema,
);
