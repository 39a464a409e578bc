import { randomBytes } from 'node:crypto';
import type {
  ChatCompletionCreateParams,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { Logger } from '@lib/logger';
import { toolCallSchema } from './grammar-schema';
import type { Generated, Generation, LocalModel } from './local-model';
import { promptParts, UnsupportedRequest } from './prompt';

/** While a streamed call waits (queue, prompt evaluation), an empty delta this often: callers heartbeat on it. */
const KEEPALIVE_MS = 2000;

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

interface Plan {
  generation: Omit<Generation, 'onText' | 'signal'>;
  /** the tool the answer calls (the grammar forces a call), or null for a text answer */
  forcedTools: ChatCompletionTool[] | null;
  stream: boolean;
  includeUsage: boolean;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const apiError = (status: number, message: string, type = 'invalid_request_error') =>
  json(status, { error: { message, type, param: null, code: null } });

function functionTools(tools: ChatCompletionTool[] | undefined) {
  return (tools ?? []).flatMap((t) => (t.type === 'function' ? [t] : []));
}

/**
 * Which tools the answer must call. A 270M model cannot tell when a tool would help, so with `auto` (the
 * default) it answers in text; `required` or a named function make the answer a call, its arguments held to
 * the tool's parameter schema by a grammar.
 */
function forced(tools: ChatCompletionTool[], choice: ChatCompletionToolChoiceOption | undefined) {
  const fns = functionTools(tools);
  if (!fns.length || choice === undefined || choice === 'auto' || choice === 'none') return null;
  if (choice === 'required') return fns;
  if (choice.type !== 'function') return null;
  const named = fns.filter((t) => t.function.name === choice.function.name);
  if (!named.length)
    throw new UnsupportedRequest(`tool_choice names ${choice.function.name}, which is not in tools`);
  return named;
}

function plan(body: ChatCompletionCreateParams): Plan {
  const forcedTools = forced(body.tools ?? [], body.tool_choice);
  const format = body.response_format;
  let schema: unknown = null;
  const notes: string[] = [];
  if (forcedTools) {
    schema = toolCallSchema(
      forcedTools.map((t) => ({ name: t.function.name, parameters: t.function.parameters })),
    );
    notes.push(
      'Answer by calling a tool, as JSON {"name": …, "arguments": {…}}. Tools:\n' +
        forcedTools.map((t) => `- ${t.function.name}: ${t.function.description ?? ''}`).join('\n'),
    );
  } else if (format?.type === 'json_schema') {
    schema = format.json_schema.schema ?? { type: 'object' };
    const text = JSON.stringify(schema);
    notes.push(`Answer with JSON${text.length <= 1500 ? ` that fits this schema: ${text}` : ''}.`);
  } else if (format?.type === 'json_object') {
    schema = { type: 'object' };
    notes.push('Answer with a JSON object.');
  }
  const stop = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  return {
    generation: {
      prompt: promptParts(body.messages, notes),
      schema,
      maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
      temperature: body.temperature ?? undefined,
      topP: body.top_p ?? undefined,
      seed: body.seed ?? undefined,
      stop,
    },
    forcedTools,
    stream: body.stream === true,
    includeUsage: body.stream === true && body.stream_options?.include_usage === true,
  };
}

function toolCalls(p: Plan, result: Generated) {
  if (!p.forcedTools) return undefined;
  const call = JSON.parse(result.text) as { name: string; arguments: unknown };
  return [
    {
      id: `call_${randomBytes(12).toString('hex')}`,
      type: 'function' as const,
      function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
    },
  ];
}

const usageOf = (r: Generated) => ({
  prompt_tokens: r.promptTokens,
  completion_tokens: r.completionTokens,
  total_tokens: r.promptTokens + r.completionTokens,
});

const finishOf = (p: Plan, r: Generated) => (p.forcedTools ? 'tool_calls' : r.finish);

/**
 * An in-process OpenAI-compatible endpoint over the local model, as the `fetch` of an OpenAI SDK client: every
 * caller keeps using the one provider interface (streaming deltas, `response_format: json_schema`, tool calls,
 * usage, API errors, aborts) whether the model is remote or this one. Only chat completions are served.
 */
export function localModelFetch(model: LocalModel, logger?: Logger): Fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    if (!url.pathname.endsWith('/chat/completions') || (init?.method ?? 'GET') !== 'POST')
      return apiError(
        404,
        `the local model serves chat completions only (not ${url.pathname}): set EMBEDDINGS_PROVIDER=local, or OPENAI_API_KEY for a server`,
      );
    let p: Plan;
    try {
      p = plan(JSON.parse(typeof init?.body === 'string' ? init.body : '') as ChatCompletionCreateParams);
    } catch (err) {
      if (err instanceof UnsupportedRequest || err instanceof SyntaxError) return apiError(400, err.message);
      throw err;
    }
    const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const signal = init?.signal ?? undefined;
    const fail = (err: unknown) => {
      if (signal?.aborted) throw err;
      if (err instanceof UnsupportedRequest) return apiError(400, err.message);
      logger?.error({ err, model: model.name }, 'local model call failed');
      return apiError(500, `the local model failed: ${(err as Error).message}`, 'server_error');
    };
    if (!p.stream) {
      try {
        const result = await model.generate({ ...p.generation, signal });
        return json(200, {
          id,
          object: 'chat.completion',
          created,
          model: model.name,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: p.forcedTools ? null : result.text,
                refusal: null,
                tool_calls: toolCalls(p, result),
              },
              finish_reason: finishOf(p, result),
              logprobs: null,
            },
          ],
          usage: usageOf(result),
        });
      } catch (err) {
        return fail(err);
      }
    }
    return new Response(sseStream(model, p, { id, created, signal }, logger), {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
    });
  };
}

function sseStream(
  model: LocalModel,
  p: Plan,
  meta: { id: string; created: number; signal?: AbortSignal },
  logger?: Logger,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const stop = new AbortController();
  const signal = meta.signal ? AbortSignal.any([meta.signal, stop.signal]) : stop.signal;
  let closed = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let last = 0;
      const send = (data: unknown) => {
        if (closed) return;
        last = Date.now();
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(data)}\n\n`));
      };
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        send({
          id: meta.id,
          object: 'chat.completion.chunk',
          created: meta.created,
          model: model.name,
          choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
        });
      chunk({ role: 'assistant', content: '' });
      const keepalive = setInterval(() => {
        if (Date.now() - last >= KEEPALIVE_MS) chunk({});
      }, KEEPALIVE_MS / 2);
      model
        .generate({
          ...p.generation,
          signal,
          onText: p.forcedTools ? undefined : (text) => chunk({ content: text }),
        })
        .then((result) => {
          const calls = toolCalls(p, result);
          if (calls) chunk({ tool_calls: calls.map((c, index) => ({ index, ...c })) });
          chunk({}, finishOf(p, result));
          if (p.includeUsage)
            send({
              id: meta.id,
              object: 'chat.completion.chunk',
              created: meta.created,
              model: model.name,
              choices: [],
              usage: usageOf(result),
            });
          if (closed) return;
          controller.enqueue(encoder.encode('data: [DONE]\n\n'));
          controller.close();
        })
        .catch((err: unknown) => {
          if (closed) return;
          if (signal.aborted) return controller.error(err);
          logger?.error({ err, model: model.name }, 'local model call failed');
          // The SDK turns an `error` field into an APIError (with no status: Temporal retries it).
          send({
            error: { message: `the local model failed: ${(err as Error).message}`, type: 'server_error' },
          });
          controller.close();
        })
        .finally(() => {
          closed = true;
          clearInterval(keepalive);
        });
    },
    cancel() {
      closed = true;
      stop.abort(new Error('the stream was cancelled'));
    },
  });
}
