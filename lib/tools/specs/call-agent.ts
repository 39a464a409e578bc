import type { ToolSpec } from '../tool-spec';

/** Attaching it lets the model ask the agents attached to its agent: one `ask_<agentId>` tool per attached
 * agent (see model-tools.ts), run as a child workflow. */
export const callAgentTool: ToolSpec = {
  toolCode: 'call_agent',
  name: 'Call an attached agent',
  description:
    "Lets the agent hand a question to one of the agents attached to it (the agent's agent-attachments), " +
    'following the instructions of that attachment, and use the answer.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
};
