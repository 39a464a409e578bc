import type { ToolSpec } from '../tool-spec';

/** Kept in the catalogue for agents that attached it: attaching an agent is what makes it callable (one
 * `ask_<agentId>` tool per attached agent, see model-tools.ts, run as a child workflow); this adds nothing. */
export const callAgentTool: ToolSpec = {
  toolCode: 'call_agent',
  name: 'Call an attached agent',
  description:
    "The agent hands a question to one of the agents attached to it (the agent's agent-attachments), " +
    'following the instructions of that attachment, and uses the answer. Every attached agent is callable ' +
    'without this tool; attaching it changes nothing.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
};
