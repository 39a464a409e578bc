import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const RUN_STATUSES = ['pending', 'running', 'success', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TRIGGER_TYPES = ['api', 'agent', 'etl', 'schedule', 'webhook', 'app'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];
export const STEP_OUTCOMES = ['success', 'skipped', 'failed'] as const;
export type StepOutcome = (typeof STEP_OUTCOMES)[number];

const stepResultSchema = new Schema(
  {
    stepId: { type: String, required: true },
    stepOrder: { type: Number, required: true },
    name: { type: String, default: '' },
    outcome: { type: String, enum: STEP_OUTCOMES, required: true },
    detail: { type: String, default: null },
    /** how many model calls the step made in its last execution */
    modelCalls: { type: Number, default: 0 },
    /** which execution of the run produced this result */
    generation: { type: Number, required: true },
    finishedAt: { type: Date, required: true },
  },
  { _id: false },
);

/**
 * One run of a chain. Its state (input and every step's output) lives here, not in the workflow's history,
 * so a run's history stays small however large the state grows. `generation` counts executions: a re-run
 * starts the next one, with its own workflow id.
 */
export const chainRunSchema = new Schema(
  {
    /** The runId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    actionChainId: { type: String, required: true },
    triggerType: { type: String, enum: TRIGGER_TYPES, required: true },
    status: { type: String, enum: RUN_STATUSES, required: true },
    statusMessage: { type: String, default: null },
    /** `{ input, ...each step's output fields }` as JSON text (model output may have any keys) */
    stateJson: { type: String, required: true },
    generation: { type: Number, default: 1 },
    /** the message id of the run request that started the current execution */
    messageId: { type: String, required: true },
    /** the member whose rights the run uses */
    startedByUserId: { type: String, required: true },
    /** by stepId: how each step ended, in the execution that ran it last */
    stepResults: { type: Map, of: stepResultSchema, default: {} },
    /** counts writes of `stateJson`/`stepResults`: a worker's cached copy of them is current while it matches
     * (absent in runs written before it was added: 0) */
    stateVersion: { type: Number, default: 0 },
    startedAt: { type: Date, default: null },
    finishedAt: { type: Date, default: null },
    /** the workflow that runs the first execution when it is not the run's own chain-run workflow: a webhook
     * delivery's, which runs the chain of its only handler itself (workflows/webhook-delivery.ts) */
    firstExecutionWorkflowId: { type: String, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: a chain's runs, by creation or update time.
chainRunSchema.index({ organizationId: 1, actionChainId: 1, createdAt: 1 });
chainRunSchema.index({ organizationId: 1, actionChainId: 1, updatedAt: 1 });

export type ChainRunDoc = DocOf<typeof chainRunSchema>;
export interface StepResult {
  stepId: string;
  stepOrder: number;
  name: string;
  outcome: StepOutcome;
  detail: string | null;
  modelCalls: number;
  generation: number;
  finishedAt: Date;
}
export const chainRunModel = defineModel('ActionChainRun', 'action_chain_runs', chainRunSchema);

/**
 * One element of a fan-out step and, once it ran, its output. Kept until the step's outputs are collected, so a
 * resumed step runs only the elements without an output (when the elements are still the same: `fingerprint`).
 */
export const fanOutResultSchema = new Schema(
  {
    /** `<runId>:<stepId>:<index>` */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    runId: { type: String, required: true },
    stepId: { type: String, required: true },
    index: { type: Number, required: true },
    elementJson: { type: String, required: true },
    /** sha256 of the whole element array */
    fingerprint: { type: String, required: true },
    outputJson: { type: String, default: null },
    modelCalls: { type: Number, default: 0 },
  },
  { versionKey: false },
);
// Serves: collecting a step's element outputs in order, and clearing them.
fanOutResultSchema.index({ organizationId: 1, runId: 1, stepId: 1, index: 1 });

export type FanOutResultDoc = DocOf<typeof fanOutResultSchema>;
export const fanOutResultModel = defineModel(
  'ActionChainFanOutResult',
  'action_chain_fan_out_results',
  fanOutResultSchema,
);
