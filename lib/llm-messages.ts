import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatMessage } from '@contracts';

export function toOpenAiMessages(messages: ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((m): ChatCompletionMessageParam => {
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    if (m.role === 'assistant') {
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((t) => ({
                id: t.id,
                type: 'function' as const,
                function: { name: t.name, arguments: t.arguments },
              })),
            }
          : {}),
      };
    }
    return { role: m.role, content: m.content };
  });
}

/**
 * Why the model refused a request for good, or null: 4xx answers other than 408/409/429 will fail the same way
 * again, so retrying them is pointless.
 */
export function rejectionOf(err: unknown): string | null {
  if (!(err instanceof OpenAI.APIError) || typeof err.status !== 'number') return null;
  const retryable = err.status === 408 || err.status === 409 || err.status === 429 || err.status >= 500;
  return retryable ? null : `the model rejected the request (${err.status}): ${err.message}`;
}
