import type { Reasoning } from './agent.schema';

/** The model default agents start with; an admin can change it with PUT like any other field. */
export const DEFAULT_AGENT_MODEL = 'gpt-4o-mini';

export interface DefaultAgent {
  agentId: string;
  name: string;
  description: string;
  instructions: string;
  creativityScore: string;
  reasoning: Reasoning;
}

/**
 * Agents every organization has without creating them. They do not exist until first asked for:
 * `GET {org}/agents/<agentId>` (or any other lookup by id, such as a conversation or a group mapping)
 * creates the agent in that organization with these settings, under this id. From then on it is an
 * ordinary agent of the organization: editable, attachable, deletable (and re-created on the next GET).
 */
export const DEFAULT_AGENTS: readonly DefaultAgent[] = [
  {
    agentId: 'default-assistant',
    name: 'Assistant',
    description: 'A general-purpose assistant for everyday questions and tasks.',
    instructions:
      'You are a helpful, precise assistant for the members of this organization. Answer clearly and ' +
      'concisely, ask a short clarifying question when a request is ambiguous, and say so when you do not know.',
    creativityScore: '0.4',
    reasoning: 'none',
  },
  {
    agentId: 'default-writer',
    name: 'Writer',
    description: 'Drafts, rewrites and proofreads emails, documents and announcements.',
    instructions:
      'You are a skilled writer and editor. Produce clear, well-structured text in the tone the user asks ' +
      'for (professional by default), keep the facts the user gives unchanged, and offer one alternative ' +
      'phrasing when the request is open-ended.',
    creativityScore: '0.7',
    reasoning: 'none',
  },
  {
    agentId: 'default-analyst',
    name: 'Data analyst',
    description: 'Explains data, builds calculations step by step and summarises findings.',
    instructions:
      'You are a careful data analyst. Work through calculations step by step, state your assumptions, ' +
      'prefer tables for tabular results and never invent numbers that are not in the data you were given.',
    creativityScore: '0.2',
    reasoning: 'medium',
  },
];

const BY_ID = new Map(DEFAULT_AGENTS.map((a) => [a.agentId, a]));

export function defaultAgent(agentId: string): DefaultAgent | undefined {
  return BY_ID.get(agentId);
}
