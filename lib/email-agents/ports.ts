import type { AgentEmailDoc } from '@lib/agents/agent-email.schema';
import type { ConversationDoc } from '@lib/conversations/conversation.schema';
import type { MessageDoc } from '@lib/conversations/message.schema';
import type { MemberDoc } from '@lib/users/member.schema';

// What mail needs of the agents, users and conversations features, as narrow ports wired to their services in
// activities/index.ts, so this feature writes only its own collection.

export type { AgentLookup } from '@lib/agents/agent-lookup';

/** The member a mail is from: their account's email address in the organization. */
export interface SenderMembers {
  memberByEmail(organizationId: string, email: string): Promise<MemberDoc | null>;
}

/** The conversation a mail opens or continues, and the reply its turn wrote. */
export interface MailConversations {
  find(organizationId: string, conversationId: string): Promise<ConversationDoc | null>;
  createForRequest(
    organizationId: string,
    requestId: string,
    fields: Pick<ConversationDoc, 'agentId' | 'title' | 'creatorUserId' | 'isBrowserTask'>,
  ): Promise<ConversationDoc>;
  putMessage(
    organizationId: string,
    fields: Pick<MessageDoc, 'conversationId' | 'requestId' | 'role' | 'status'> & { text: string },
  ): Promise<unknown>;
  message(
    organizationId: string,
    conversationId: string,
    requestId: string,
    role: 'user' | 'assistant',
  ): Promise<MessageDoc | null>;
}

/** Who holds an inbound address, in any organization (lib/agents' address book). */
export interface AgentAddressBook {
  findAgentEmailCrossOrg(address: string): Promise<AgentEmailDoc | null>;
}
