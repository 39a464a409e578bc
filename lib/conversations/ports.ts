import type { ModelTool } from '@contracts';
import type { AgentDoc } from '@lib/agents/agent.schema';

// What conversations need of the features around them, as narrow ports that lib/services.ts (and
// activities/index.ts) wire to their owners, so conversations never hold those features' collections.

/** An agent by id, whoever asks (null once it is gone): the agents feature. */
export interface AgentLookup {
  find(organizationId: string, agentId: string): Promise<AgentDoc | null>;
}

/** The tools a model sees for an agent: the tools feature (lib/tools/model-tools.ts). */
export interface ModelToolSource {
  forAgent(organizationId: string, agentId: string): Promise<ModelTool[]>;
}
