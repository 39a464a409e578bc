import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const INPUT_TYPES = ['json', 'file'] as const;
export const REASONING_LEVELS = ['none', 'low', 'medium', 'high'] as const;

/** An action chain: also what the rest of the service calls a "workflow" (its id is the workflowId). */
export const chainSchema = new Schema(
  {
    /** The actionChainId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    name: { type: String, required: true },
    // Required in the API, but may be empty: mongoose's `required` would refuse an empty string.
    description: { type: String, default: '' },
    llmInstructions: { type: String, default: '' },
    inputType: { type: String, enum: INPUT_TYPES, default: 'json' },
    /** The chain's owner: its creator, or whom a removed creator's chains were reassigned to. */
    creatorUserId: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the chain list, by creation or update time.
chainSchema.index({ organizationId: 1, createdAt: 1 });
chainSchema.index({ organizationId: 1, updatedAt: 1 });
// Serves: reassigning a removed member's chains.
chainSchema.index({ organizationId: 1, creatorUserId: 1 });

export type ChainDoc = DocOf<typeof chainSchema>;
export const chainModel = defineModel('ActionChain', 'action_chains', chainSchema);

/**
 * One step of a chain. Schemas are stored as JSON text: a model's or a user's schema may have keys (`$ref`,
 * dotted names) a document database refuses as field names.
 */
export const stepSchema = new Schema(
  {
    /** The stepId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    actionChainId: { type: String, required: true },
    stepOrder: { type: Number, required: true },
    name: { type: String, default: '' },
    description: { type: String, default: '' },
    instructions: { type: String, default: '' },
    reasoning: { type: String, enum: REASONING_LEVELS, default: 'none' },
    enabled: { type: Boolean, default: true },
    inputSchemaJson: { type: String, default: null },
    outputSchemaJson: { type: String, default: null },
    showWholeChainState: { type: Boolean, default: false },
    forEachElement: { type: String, default: null },
    toolChoice: { type: String, default: null },
    runIf: { type: String, default: null },
    failBeforeRunningIf: { type: String, default: null },
    failAfterRunningIf: { type: String, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: a chain's steps in execution order.
stepSchema.index({ organizationId: 1, actionChainId: 1, stepOrder: 1 });

export type StepDoc = DocOf<typeof stepSchema>;
export const stepModel = defineModel('ActionChainStep', 'action_chain_steps', stepSchema);
