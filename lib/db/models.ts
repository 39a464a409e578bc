import mongoose, { type Connection } from 'mongoose';
import { agentLinkSchema, agentToolAttachmentSchema } from './agent-attachment.schema';
import { agentSchema } from './agent.schema';
import { apiKeySchema } from './api-key.schema';
import { conversationSchema } from './conversation.schema';
import { messageSchema } from './message.schema';
import { customTableSchema } from './custom-table.schema';
import { groupAgentMappingSchema } from './group-agent-mapping.schema';
import { memberSchema } from './member.schema';
import { organizationSchema } from './organization.schema';
import { tableRowIdBlockSchema } from './table-row-id-block.schema';
import { userGroupSchema } from './user-group.schema';
import { userSchema } from './user.schema';

export function createModels(conn: Connection) {
  return {
    Organization: conn.model('Organization', organizationSchema, 'organizations'),
    User: conn.model('User', userSchema, 'users'),
    Member: conn.model('Member', memberSchema, 'members'),
    UserGroup: conn.model('UserGroup', userGroupSchema, 'user_groups'),
    ApiKey: conn.model('ApiKey', apiKeySchema, 'api_keys'),
    Conversation: conn.model('Conversation', conversationSchema, 'conversations'),
    Message: conn.model('Message', messageSchema, 'messages'),
    CustomTable: conn.model('CustomTable', customTableSchema, 'custom_tables'),
    TableRowIdBlock: conn.model('TableRowIdBlock', tableRowIdBlockSchema, 'table_row_id_blocks'),
    Agent: conn.model('Agent', agentSchema, 'agents'),
    AgentToolAttachment: conn.model('AgentToolAttachment', agentToolAttachmentSchema, 'agent_tools'),
    AgentLink: conn.model('AgentLink', agentLinkSchema, 'agent_links'),
    GroupAgentMapping: conn.model('GroupAgentMapping', groupAgentMappingSchema, 'group_agent_mappings'),
  };
}

export type Models = ReturnType<typeof createModels>;

export async function connectDatabase(uri: string): Promise<{ conn: Connection; models: Models }> {
  const conn = mongoose.createConnection(uri, { serverSelectionTimeoutMS: 10_000, autoIndex: true });
  await conn.asPromise();
  const models = createModels(conn);
  await Promise.all(Object.values(models).map((m) => m.init()));
  return { conn, models };
}
