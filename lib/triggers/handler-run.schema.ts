import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const TRIGGER_SOURCES = ['schedule', 'webhook'] as const;
export type TriggerSource = (typeof TRIGGER_SOURCES)[number];

/**
 * One handler's execution for one schedule fire or one webhook delivery. Its id derives from the handler
 * workflow's id, so a retried activity finds it. It records what was started (`runId`: the chain run, or the
 * conversation of an agent handler) or why nothing could be (`failed`); how the run is doing is read from the run
 * itself when asked.
 */
export const handlerRunSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    source: { type: String, enum: TRIGGER_SOURCES, required: true },
    /** the triggerId or webhookId */
    parentId: { type: String, required: true },
    /** the fire time (ISO) of a schedule, the deliveryId of a webhook */
    eventKey: { type: String, required: true },
    handlerId: { type: String, required: true },
    handlerType: { type: String, required: true },
    /** the chain run id, or the conversation id of an agent handler */
    runId: { type: String, default: null },
    /** the turn's request id (agent handlers) */
    requestId: { type: String, default: null },
    status: { type: String, enum: ['starting', 'started', 'failed', 'skipped'], required: true },
    statusMessage: { type: String, default: null },
    startedAt: { type: Date, required: true },
    endedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: a schedule's most recent run; a webhook delivery's handler runs.
handlerRunSchema.index({ organizationId: 1, parentId: 1, startedAt: -1 });
handlerRunSchema.index({ organizationId: 1, parentId: 1, eventKey: 1 });

export type HandlerRunDoc = DocOf<typeof handlerRunSchema>;
export const handlerRunModel = defineModel('TriggerHandlerRun', 'trigger_handler_runs', handlerRunSchema);
