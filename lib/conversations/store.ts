import type { ConversationsRepository } from './conversations.repository';

/** The conversations feature's own collections (conversations and their messages), for one organization. */
export interface ConversationsStore {
  conversations: ConversationsRepository;
}
