import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** Members of `userGroupId` may use `agentId` (see lib/agents/agent-access.ts). `_id` is
 * `<organizationId>:<userGroupId>:<agentId>`: one mapping per pair, even under concurrent requests. */
export const groupAgentMappingSchema = new Schema(
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

export type GroupAgentMappingDoc = DocOf<typeof groupAgentMappingSchema>;
export const groupAgentMappingModel = defineModel(
  'GroupAgentMapping',
  'group_agent_mappings',
  groupAgentMappingSchema,
);
