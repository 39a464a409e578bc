import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const REASONING_LEVELS = ['none', 'low', 'medium', 'high'] as const;
export type Reasoning = (typeof REASONING_LEVELS)[number];
export const AGENT_VISIBILITIES = ['public', 'private'] as const;
export type AgentVisibility = (typeof AGENT_VISIBILITIES)[number];

/** The email settings of an agent; null means not set. Lists are stored normalised (see agent-fields.ts). */
export const AGENT_EMAIL_FIELDS = [
  'emailAddress',
  'emailFilters',
  'emailAttachmentsToKnowledgeBaseId',
  'emailAttachmentsFileTypeFilter',
  'emailCcTo',
  'emailBccTo',
  'emailReplyTo',
] as const;
export type AgentEmailFields = Record<(typeof AGENT_EMAIL_FIELDS)[number], string | null>;

const nullableString = { type: String, default: null };

export const agentSchema = new Schema(
  {
    /** `<organizationId>:<agentId>` (agentDocId): deterministic, so two concurrent creations of a default
     * agent collide. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    /** The id on the wire: `agt_…` for created agents, a catalogue id such as `default-assistant` for defaults. */
    agentId: { type: String, required: true },
    name: { type: String, required: true },
    /** Lower-cased name: the sort key of `orderBy=name` (the embedded database has no collation). */
    nameSort: { type: String, required: true },
    description: { type: String, default: '' },
    instructions: { type: String, default: '' },
    model: { type: String, required: true },
    /** Numeric string from 0 to 1. */
    creativityScore: { type: String, default: '0.4' },
    reasoning: { type: String, enum: REASONING_LEVELS, default: 'none' },
    emailAddress: nullableString,
    /** Lower-cased emailAddress, for routing inbound mail to exactly one agent. */
    emailAddressKey: nullableString,
    emailFilters: nullableString,
    emailAttachmentsToKnowledgeBaseId: nullableString,
    emailAttachmentsFileTypeFilter: nullableString,
    emailCcTo: nullableString,
    emailBccTo: nullableString,
    emailReplyTo: nullableString,
    visibility: { type: String, enum: AGENT_VISIBILITIES, default: 'private' },
    /** null for default agents, which the service creates. */
    creatorUserId: nullableString,
  },
  { timestamps: true, versionKey: false },
);
// Serves: every lookup of an agent by its wire id, and the access filter (`agentId $in`).
agentSchema.index({ organizationId: 1, agentId: 1 }, { unique: true });
// Serves: the agent list ordered by name (the default order).
agentSchema.index({ organizationId: 1, nameSort: 1, agentId: 1 });
// Serves: the agent list ordered by created_at / updated_at.
agentSchema.index({ organizationId: 1, createdAt: 1 });
agentSchema.index({ organizationId: 1, updatedAt: 1 });
// Serves: routing inbound mail to the agent that owns an address (across organizations).
agentSchema.index({ emailAddressKey: 1 });

export type AgentDoc = DocOf<typeof agentSchema>;
export const agentModel = defineModel('Agent', 'agents', agentSchema);

export const agentDocId = (organizationId: string, agentId: string) => `${organizationId}:${agentId}`;
