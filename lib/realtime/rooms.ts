import type { EventTarget } from '@contracts';

/** socket.io rooms. Every member joins their user room on connect; conversation rooms are joined on request
 * after an access check. Events of a turn go to both, so only allowed users receive them. */
export const rooms = {
  user: (organizationId: string, userId: string) => `user:${organizationId}:${userId}`,
  conversation: (organizationId: string, conversationId: string) =>
    `conversation:${organizationId}:${conversationId}`,
  /** Sockets authenticated with one API key: revoking the key disconnects them. */
  apiKey: (organizationId: string, apiKeyId: string) => `apikey:${organizationId}:${apiKeyId}`,
};

export type RealtimeEvent = 'conversation' | 'tool-update' | 'task-plan';

export type { EventTarget };
