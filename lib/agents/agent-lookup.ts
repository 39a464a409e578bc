import type { AgentDoc } from './agent.schema';

/**
 * An agent by id for a feature that works on it after access was checked (a turn, an analysis, a mail): null once
 * it is gone. AgentsService answers it; the features that use it take it as this narrow port.
 */
export interface AgentLookup {
  find(organizationId: string, agentId: string): Promise<AgentDoc | null>;
}
