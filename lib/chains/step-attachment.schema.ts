import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const STEP_ATTACHMENT_KINDS = ['agent', 'knowledge-base', 'tool'] as const;
export type StepAttachmentKind = (typeof STEP_ATTACHMENT_KINDS)[number];

/** An agent, knowledge base or tool a step may use. */
export const stepAttachmentSchema = new Schema(
  {
    /** `<stepId>:<kind>:<targetId>`: one attachment of a target per step. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    actionChainId: { type: String, required: true },
    stepId: { type: String, required: true },
    kind: { type: String, enum: STEP_ATTACHMENT_KINDS, required: true },
    /** agentId, knowledgeBaseId or toolCode */
    targetId: { type: String, required: true },
    /** a tool's configuration as JSON text (secret values included: never shown) */
    configJson: { type: String, default: null },
    creatorUserId: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: a step's attachments (list); a chain's (what a run's steps give the model, and deleting it).
stepAttachmentSchema.index({ organizationId: 1, stepId: 1, kind: 1 });
stepAttachmentSchema.index({ organizationId: 1, actionChainId: 1 });
// Serves: removing an agent's or knowledge base's attachments when it is deleted.
stepAttachmentSchema.index({ organizationId: 1, kind: 1, targetId: 1 });

export type StepAttachmentDoc = DocOf<typeof stepAttachmentSchema>;
export const stepAttachmentModel = defineModel(
  'ActionChainStepAttachment',
  'action_chain_step_attachments',
  stepAttachmentSchema,
);

/** An action chain an agent may run as a tool. */
export const agentChainSchema = new Schema(
  {
    /** `<agentId>:<actionChainId>` */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    agentId: { type: String, required: true },
    actionChainId: { type: String, required: true },
    creatorUserId: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: an agent's chains (list, and its tools in a turn); a chain's attachments (deleting it).
agentChainSchema.index({ organizationId: 1, agentId: 1, createdAt: 1 });
agentChainSchema.index({ organizationId: 1, actionChainId: 1 });

export type AgentChainDoc = DocOf<typeof agentChainSchema>;
export const agentChainModel = defineModel('AgentActionChain', 'agent_action_chains', agentChainSchema);
