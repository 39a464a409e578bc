import type { AgentLinksRepository } from './agent-links.repository';
import type { AgentsRepository } from './agents.repository';

/** The agents feature's own collections, for one organization. */
export interface AgentsStore {
  agents: AgentsRepository;
  agentLinks: AgentLinksRepository;
}
