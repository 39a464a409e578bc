import { Schema } from 'mongoose';

/** Members of `userGroupId` may use `agentId` (see lib/services/agent-access.ts). */
export interface GroupAgentMappingDoc {
  /** `<organizationId>:<userGroupId>:<agentId>`: one mapping per pair, even under concurrent requests. */
  _id: string;
  organizationId: string;
  userGroupId: string;
  agentId: string;
  createdAt: Date;
  updatedAt: Date;
}

export const groupAgentMappingSchema = new Schema<GroupAgentMappingDoc>(
  {
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    userGroupId: { type: String, required: true },
    agentId: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the agents of a group (listing, the access rule) and removal with the group.
groupAgentMappingSchema.index({ organizationId: 1, userGroupId: 1, createdAt: 1 });
// Serves: removing the mappings of a deleted agent.
groupAgentMappingSchema.index({ organizationId: 1, agentId: 1 });
