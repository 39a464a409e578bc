import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** An inbound address claimed by one agent. `_id` is the lower-cased address: the primary key makes a claim
 * atomic on any Mongo-wire store, so two agents can never hold one address, whatever their organization. */
export const agentEmailSchema = new Schema(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    /** The holder's `_id` (agentDocId). */
    agentDocId: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);

export type AgentEmailDoc = DocOf<typeof agentEmailSchema>;
export const agentEmailModel = defineModel('AgentEmail', 'agent_email_addresses', agentEmailSchema);
