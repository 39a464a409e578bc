import { ApplicationFailure, Context } from '@temporalio/activity';
import OpenAI from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { FAILURES, type AgentLoopSetup, type ModelReply, type ModelTool } from '@contracts';
import { isReasoningModel } from '@lib/llm';
import { rejectionOf, toOpenAiMessages } from '@lib/llm-messages';

export { toOpenAiMessages };

function toOpenAiTools(tools: ModelTool[]): ChatCompletionTool[] | undefined {
  if (!tools.length) return undefined;
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

/** Stops retrying a call the model refused for good (rejectionOf); anything else is thrown as it is. */
export function classify(err: unknown): never {
  const rejection = rejectionOf(err);
  if (rejection) throw ApplicationFailure.nonRetryable(rejection, FAILURES.llmRequestRejected);
  throw err;
}

/**
 * How often a streaming call heartbeats at most. The worker sends Temporal a heartbeat only every 0.8 × the
 * heartbeat timeout anyway; each local call still costs an encode and a call into the SDK's core, which once per
 * chunk was about a tenth of the worker's main thread under concurrent turns.
 */
export const HEARTBEAT_EVERY_MS = 1000;

/**
 * Streams one model call, handing each text delta to `onDelta` and heartbeating (at most every
 * HEARTBEAT_EVERY_MS, on a chunk) so a dead worker is noticed quickly; returns the whole text and any tool calls.
 */
export async function streamModel(
  client: OpenAI,
  call: AgentLoopSetup,
  onDelta: (text: string) => void,
): Promise<ModelReply> {
  const reasoning = isReasoningModel(call.model);
  let content = '';
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  let beatAt = -Infinity;
  try {
    const stream = await client.chat.completions.create(
      {
        model: call.model,
        messages: toOpenAiMessages(call.messages),
        tools: toOpenAiTools(call.tools),
        stream: true,
        ...(reasoning
          ? call.reasoning && call.reasoning !== 'none'
            ? { reasoning_effort: call.reasoning as 'low' | 'medium' | 'high' }
            : {}
          : { temperature: call.temperature }),
      },
      { signal: Context.current().cancellationSignal },
    );
    for await (const chunk of stream) {
      const now = Date.now();
      if (now - beatAt >= HEARTBEAT_EVERY_MS) {
        Context.current().heartbeat();
        beatAt = now;
      }
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        content += delta.content;
        onDelta(delta.content);
      }
      for (const t of delta.tool_calls ?? []) {
        const slot = (calls[t.index] ??= { id: '', name: '', arguments: '' });
        if (t.id) slot.id = t.id;
        if (t.function?.name) slot.name += t.function.name;
        if (t.function?.arguments) slot.arguments += t.function.arguments;
      }
    }
  } catch (err) {
    classify(err);
  }
  return { content, toolCalls: calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${i}` })) };
}
