import type { ChatMessage, EventTarget, ModelTool, TurnInput, TurnSetup } from '@contracts';
import type { AgentDoc } from '@lib/agents/agent.schema';

/** How much of a conversation the model sees: the newest messages, so a long conversation stays in context. */
export const HISTORY_MESSAGES = 100;

/**
 * The largest setup (as JSON) the API hands a turn in its input; a bigger one (long instructions, many tools)
 * is read by the workflow's loadTurn instead, so a turn's start stays a small request.
 */
export const MAX_INPUT_SETUP_BYTES = 64 * 1024;

/** The model settings of an agent, as a turn or an agent call uses them. */
export function agentSettings(
  agent: Pick<AgentDoc, 'model' | 'creativityScore' | 'reasoning' | 'instructions'>,
) {
  return {
    model: agent.model,
    temperature: Number(agent.creativityScore ?? '0.4'),
    reasoning: agent.reasoning,
    instructions: agent.instructions,
  };
}

/**
 * What a turn starts from: the agent's settings, its instructions and the conversation so far (oldest first),
 * its tools and the caller's frontend tools, and where events go. Built by loadTurn, and by the API for a turn
 * that opens a conversation (it has just read and written all of it).
 */
export function turnSetupOf(parts: {
  agent: ReturnType<typeof agentSettings>;
  tools: ModelTool[];
  history: Array<{ role: 'user' | 'assistant'; text: string }>;
  frontendTools: TurnInput['frontendTools'];
  target: EventTarget;
}): TurnSetup {
  const frontend = (parts.frontendTools ?? []).map((t): ModelTool => ({
    name: t.name,
    description: t.description ?? '',
    parameters: t.parameters ?? { type: 'object', properties: {} },
    executor: 'frontend',
  }));
  const { instructions, ...settings } = parts.agent;
  return {
    ...settings,
    messages: [
      { role: 'system', content: instructions },
      ...parts.history.map((m): ChatMessage => ({ role: m.role, content: m.text })),
    ],
    tools: [...parts.tools, ...frontend],
    target: parts.target,
  };
}
