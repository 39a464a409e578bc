import type { ModelTool } from '@contracts';

// What conversations need of the features around them, as narrow ports that lib/services.ts (and
// activities/index.ts) wire to their owners, so conversations never hold those features' collections.

export type { AgentLookup } from '@lib/agents/agent-lookup';

/** The tools a model sees for an agent: the tools feature (lib/tools/model-tools.ts). */
export interface ModelToolSource {
  forAgent(organizationId: string, agentId: string): Promise<ModelTool[]>;
}
