import type { AgentDoc } from '@lib/agents/agent.schema';

/** The agent an analysis is worked on by, whoever asks (null once it is gone): the agents feature's, reached
 * through this port (wired in lib/services.ts and activities/index.ts) rather than its collection. */
export interface AgentLookup {
  find(organizationId: string, agentId: string): Promise<AgentDoc | null>;
}
