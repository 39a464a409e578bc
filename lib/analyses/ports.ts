// The agent an analysis is worked on by comes through the agents feature's narrow port.
export type { AgentLookup } from '@lib/agents/agent-lookup';
