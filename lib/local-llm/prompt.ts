import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** A request the local model cannot serve as asked: it answers 400 with this message. */
export class UnsupportedRequest extends Error {}

export interface PromptTool {
  name: string;
  description: string;
}

/**
 * The model's prompt as a plain transcript. The packaged model is Gemma 3 270M *pretrained* (not the
 * instruction-tuned variant: its GGUF has no chat template), and measured here it continues a
 * "User: … / Assistant:" transcript with an answer, while Gemma's own turn markers make it echo the prompt.
 */
export const SPEAKERS = { user: 'User', assistant: 'Assistant' } as const;
/** Where an answer ends: the model starting the next turn, or a blank line (a 270M model rambles on after it). */
export const STOP_TRIGGERS = [`\n${SPEAKERS.user}:`, `\n${SPEAKERS.assistant}:`, '\nTool result', '\n\n'];

function text(content: ChatCompletionMessageParam['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'refusal') return part.refusal;
      throw new UnsupportedRequest(
        `the local model reads text only (a ${part.type} part was sent): point OPENAI_BASE_URL at a model that reads it`,
      );
    })
    .join('');
}

export interface PromptParts {
  /** system messages and the notes the request adds (tools, output schema) */
  preamble: string;
  /** one rendered line group per conversation message, oldest first */
  turns: string[];
  /** what the model continues */
  cue: string;
}

/** Splits the request into the parts the prompt is made of; `fit` then drops the oldest turns that do not fit. */
export function promptParts(messages: ChatCompletionMessageParam[], notes: string[] = []): PromptParts {
  const system: string[] = [];
  const turns: string[] = [];
  const toolNames = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') {
      const t = text(m.content).trim();
      if (t) system.push(t);
    } else if (m.role === 'user') {
      turns.push(`${SPEAKERS.user}: ${text(m.content).trim()}`);
    } else if (m.role === 'assistant') {
      const said = text(m.content ?? null).trim();
      const calls = (m.tool_calls ?? []).flatMap((c) => {
        if (c.type !== 'function') return [];
        toolNames.set(c.id, c.function.name);
        return [`(calls the tool ${c.function.name} with ${c.function.arguments})`];
      });
      turns.push(`${SPEAKERS.assistant}: ${[said, ...calls].filter(Boolean).join(' ')}`);
    } else if (m.role === 'tool') {
      const name = toolNames.get(m.tool_call_id) ?? 'tool';
      turns.push(`Tool result (${name}): ${text(m.content).trim()}`);
    }
  }
  const preamble = [...system, ...notes].join('\n\n');
  return { preamble, turns, cue: `${SPEAKERS.assistant}:` };
}

export function render(parts: PromptParts, fromTurn = 0): string {
  const head = parts.preamble ? `${parts.preamble}\n\n` : '';
  return `${head}${[...parts.turns.slice(fromTurn), parts.cue].join('\n')}`;
}
