import { Schema } from 'mongoose';

export const REASONING_LEVELS = ['none', 'low', 'medium', 'high'] as const;
export type Reasoning = (typeof REASONING_LEVELS)[number];
export const AGENT_VISIBILITIES = ['public', 'private'] as const;
export type AgentVisibility = (typeof AGENT_VISIBILITIES)[number];

/** The email settings of an agent; null means not set. Lists are stored normalised (see lib/agents/agent-fields). */
export interface AgentEmailFields {
  emailAddress: string | null;
  emailFilters: string | null;
  emailAttachmentsToKnowledgeBaseId: string | null;
  emailAttachmentsFileTypeFilter: string | null;
  emailCcTo: string | null;
  emailBccTo: string | null;
  emailReplyTo: string | null;
}

export interface AgentDoc extends AgentEmailFields {
  /** `<organizationId>:<agentId>`: deterministic, so two concurrent creations of a default agent collide. */
  _id: string;
  organizationId: string;
  /** The id on the wire: `agt_…` for created agents, a catalogue id such as `default-assistant` for defaults. */
  agentId: string;
  name: string;
  /** Lower-cased name: the sort key of `orderBy=name` (no collation on FerretDB). */
  nameSort: string;
  description: string;
  instructions: string;
  model: string;
  /** Numeric string from 0 to 1. */
  creativityScore: string;
  reasoning: Reasoning;
  /** Lower-cased emailAddress, for routing inbound mail to exactly one agent. */
  emailAddressKey: string | null;
  visibility: AgentVisibility;
  /** null for default agents, which the service creates. */
  creatorUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const agentDocId = (organizationId: string, agentId: string) => `${organizationId}:${agentId}`;

const nullableString = { type: String, default: null };

export const agentSchema = new Schema<AgentDoc>(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    agentId: { type: String, required: true },
    name: { type: String, required: true },
    nameSort: { type: String, required: true },
    description: { type: String, default: '' },
    instructions: { type: String, default: '' },
    model: { type: String, required: true },
    creativityScore: { type: String, default: '0.4' },
    reasoning: { type: String, enum: REASONING_LEVELS, default: 'none' },
    emailAddress: nullableString,
    emailAddressKey: nullableString,
    emailFilters: nullableString,
    emailAttachmentsToKnowledgeBaseId: nullableString,
    emailAttachmentsFileTypeFilter: nullableString,
    emailCcTo: nullableString,
    emailBccTo: nullableString,
    emailReplyTo: nullableString,
    visibility: { type: String, enum: AGENT_VISIBILITIES, default: 'private' },
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
