import type { BrowserSessionsRepository } from './browser-sessions.repository';

/** The browser-sessions feature's own collections (sessions and their slots), for one organization. */
export interface BrowserSessionsStore {
  browserSessions: BrowserSessionsRepository;
}
