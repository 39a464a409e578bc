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
 * How often a streaming call heartbeats, from its start, whether chunks come or not: a model may think for longer
 * than the heartbeat timeout before its first token, and the worker is alive meanwhile. A call done sooner sends
 * none (the heartbeat timeout counts from the activity's start), which spares most turns a write in Temporal
 * before their first delta. The SDK sends Temporal at most one every 0.8 × the heartbeat timeout anyway.
 */
export const HEARTBEAT_EVERY_MS = 1000;

/**
 * Streams one model call, handing each text delta to `onDelta` and heartbeating every HEARTBEAT_EVERY_MS while
 * it lasts, so a dead worker is noticed quickly; returns the whole text and any tool calls.
 */
export async function streamModel(
  client: OpenAI,
  call: AgentLoopSetup,
  onDelta: (text: string) => void,
): Promise<ModelReply> {
  const reasoning = isReasoningModel(call.model);
  let content = '';
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  const context = Context.current();
  const beating = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
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
      { signal: context.cancellationSignal },
    );
    for await (const chunk of stream) {
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
  } finally {
    clearInterval(beating);
  }
  return { content, toolCalls: calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${i}` })) };
}
