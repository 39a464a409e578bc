import type { ServerResponse } from 'node:http';
import type OpenAI from 'openai';

// The OpenAI wire format, kept apart from the scripting in llm.ts. Typed against the SDK's own response
// types so a field the SDK expects cannot silently go missing.

export interface ToolCallOut {
  id: string;
  name: string;
  arguments: string;
}

/** One assistant turn, ready to be written as a JSON body or as a stream of chunks. */
export interface Turn {
  id: string;
  model: string;
  created: number;
  content: string | null;
  /** How `content` is split into `delta.content` chunks when streamed. */
  pieces: string[];
  toolCalls: ToolCallOut[];
  promptTokens: number;
  /** Stopped at the token limit. */
  cut?: boolean;
}

/** Whitespace-separated words: a stable, cheap stand-in for a tokenizer. */
export function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Splits text into word-sized pieces (each keeps its trailing whitespace) so a stream has many deltas. */
export function splitContent(text: string): string[] {
  const pieces = text.match(/\S+\s*|\s+/g) ?? [];
  return pieces.length > 0 ? pieces : [text];
}

/** Splits tool arguments into three pieces, as models stream partial JSON. */
function splitArguments(args: string): string[] {
  const size = Math.max(1, Math.ceil(args.length / 3));
  const out: string[] = [];
  for (let i = 0; i < args.length; i += size) out.push(args.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

function usage(turn: Turn): OpenAI.CompletionUsage {
  const completion =
    countTokens(turn.content ?? '') + turn.toolCalls.reduce((n, c) => n + countTokens(c.arguments) + 1, 0);
  return {
    prompt_tokens: turn.promptTokens,
    completion_tokens: completion,
    total_tokens: turn.promptTokens + completion,
  };
}

const finishReason = (turn: Turn) =>
  turn.cut ? 'length' : turn.toolCalls.length > 0 ? 'tool_calls' : 'stop';

export function completionBody(turn: Turn): OpenAI.Chat.ChatCompletion {
  const message: OpenAI.Chat.ChatCompletionMessage = {
    role: 'assistant',
    content: turn.content,
    refusal: null,
  };
  if (turn.toolCalls.length > 0) {
    message.tool_calls = turn.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return {
    id: turn.id,
    object: 'chat.completion',
    created: turn.created,
    model: turn.model,
    system_fingerprint: 'fp_scripted',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(turn) }],
    usage: usage(turn),
  };
}

/** The chunks OpenAI streams for one turn: role, content deltas, tool call deltas, finish, usage. */
export function completionChunks(turn: Turn, includeUsage: boolean): OpenAI.Chat.ChatCompletionChunk[] {
  const chunk = (
    delta: OpenAI.Chat.ChatCompletionChunk.Choice.Delta,
    finish: OpenAI.Chat.ChatCompletionChunk.Choice['finish_reason'] = null,
  ): OpenAI.Chat.ChatCompletionChunk => ({
    id: turn.id,
    object: 'chat.completion.chunk',
    created: turn.created,
    model: turn.model,
    system_fingerprint: 'fp_scripted',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const out = [chunk({ role: 'assistant', content: turn.toolCalls.length > 0 && !turn.content ? null : '' })];
  if (turn.content) for (const piece of turn.pieces) out.push(chunk({ content: piece }));
  turn.toolCalls.forEach((call, index) => {
    const [first = '', ...rest] = splitArguments(call.arguments);
    out.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: first } },
        ],
      }),
    );
    for (const piece of rest) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  out.push(chunk({}, finishReason(turn)));
  if (includeUsage) out.push({ ...chunk({}), choices: [], usage: usage(turn) });
  return out;
}

/** Writes chunks as server-sent events, ending with `data: [DONE]`. */
export async function writeSse(res: ServerResponse, chunks: object[], chunkDelayMs = 0): Promise<void> {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  for (const c of chunks) {
    res.write(`data: ${JSON.stringify(c)}\n\n`);
    if (chunkDelayMs > 0) await new Promise((r) => setTimeout(r, chunkDelayMs));
  }
  res.end('data: [DONE]\n\n');
}

export function errorBody(status: number, message: string, type?: string, code?: string) {
  const defaults: Record<number, [string, string]> = {
    400: ['invalid_request_error', 'invalid_request'],
    401: ['invalid_request_error', 'invalid_api_key'],
    404: ['invalid_request_error', 'not_found'],
    429: ['requests', 'rate_limit_exceeded'],
  };
  const [t, c] = defaults[status] ?? ['server_error', 'server_error'];
  return { error: { message, type: type ?? t, param: null, code: code ?? c } };
}

/**
 * A deterministic embedding: hashed bag of words (FNV-1a picks the bucket and the sign), L2-normalised.
 * Texts sharing words get a high cosine similarity, identical texts identical vectors.
 */
export function embed(text: string, dimensions: number): number[] {
  const vec = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
    vec[h % dimensions]! += h & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vec);
  return norm === 0 ? vec : vec.map((v) => v / norm);
}

/** `encoding_format: 'base64'` (the SDK's default) is little-endian float32 bytes. */
export function encodeEmbedding(vec: number[], format: unknown): number[] | string {
  return format === 'base64' ? Buffer.from(new Float32Array(vec).buffer).toString('base64') : vec;
}
