import type { EmailMessagesRepository } from './email-messages.repository';

/** The email-agents feature's own collection (inbound mail and the replies sent), for one organization. */
export interface EmailAgentsStore {
  emailMessages: EmailMessagesRepository;
}
