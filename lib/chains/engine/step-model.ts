import type { ErrorObject } from 'ajv';
import type OpenAI from 'openai';
import type { ChatCompletionToolChoiceOption } from 'openai/resources/chat/completions';
import type { ChatMessage, ChatToolCall, ModelTool } from '@contracts';
import { validatorFor } from '@lib/chains/step-fields';
import { jsonDepth, MAX_JSON_DEPTH } from '@lib/json-depth';
import { isReasoningModel } from '@lib/llm';
import { rejectionOf, toOpenAiMessages } from '@lib/llm-messages';
import type { Attempt } from './attempt';
import { ModelRejected, StepFailed, type Spent } from './errors';

/** Model/tool rounds of one step before it must answer without tools. */
export const STEP_TOOL_ROUNDS = 8;
/** Answers a step gets to fit its output schema (the later ones see what was wrong). */
export const OUTPUT_ATTEMPTS = 3;

export interface StepModelRequest {
  model: string;
  reasoning: string;
  messages: ChatMessage[];
  tools: ModelTool[];
  toolChoice: string | null;
  /** JSON text of the step's output schema */
  outputSchemaJson: string | null;
}

/** The answer, and its model calls with their token usage (what the step pays for). */
export interface StepAnswer extends Spent {
  /** the parsed answer (outputSchema), or the text */
  value: unknown;
}

function toolChoiceOf(choice: string | null, tools: ModelTool[]): ChatCompletionToolChoiceOption | undefined {
  if (!tools.length || !choice) return undefined;
  if (choice === 'auto' || choice === 'required' || choice === 'none') return choice;
  if (!tools.some((t) => t.name === choice))
    throw new StepFailed(
      `toolChoice names ${choice}, which is not attached to the step (attached: ${tools.map((t) => t.name).join(', ') || 'none'})`,
    );
  return { type: 'function', function: { name: choice } };
}

function describe(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '(answer)'} ${e.message ?? 'is invalid'}`).join('; ');
}

/**
 * Asks the model for one step's answer: tool rounds (tools run through `runTool`) until it answers, then, with
 * an output schema, the answer must be JSON that fits it; an answer that does not is sent back with what was
 * wrong, up to OUTPUT_ATTEMPTS answers, after which the step fails naming the problems.
 */
export async function answerStep(
  llm: OpenAI,
  req: StepModelRequest,
  runTool: (call: ChatToolCall) => Promise<string>,
  attempt: Pick<Attempt, 'heartbeat' | 'signal'>,
): Promise<StepAnswer> {
  // A model call that is not streamed says nothing for a while: the beat tells Temporal the worker is alive.
  const beat = setInterval(() => attempt.heartbeat(), 3000);
  try {
    return await answer(llm, req, runTool, attempt.signal);
  } finally {
    clearInterval(beat);
  }
}

async function answer(
  llm: OpenAI,
  req: StepModelRequest,
  runTool: (call: ChatToolCall) => Promise<string>,
  signal: AbortSignal | undefined,
): Promise<StepAnswer> {
  const messages = [...req.messages];
  const outputSchema = req.outputSchemaJson
    ? (JSON.parse(req.outputSchemaJson) as Record<string, unknown>)
    : null;
  const validate = req.outputSchemaJson ? validatorFor(req.outputSchemaJson) : null;
  const reasoning = isReasoningModel(req.model);
  const usage: StepAnswer['usage'] = [];
  let modelCalls = 0;
  let toolRounds = 0;
  let problems = '';
  for (let answers = 0; answers < OUTPUT_ATTEMPTS;) {
    const tools = toolRounds < STEP_TOOL_ROUNDS ? req.tools : [];
    let completion: OpenAI.Chat.ChatCompletion;
    try {
      completion = await llm.chat.completions.create(
        {
          model: req.model,
          messages: toOpenAiMessages(messages),
          ...(tools.length
            ? {
                tools: tools.map((t) => ({
                  type: 'function' as const,
                  function: { name: t.name, description: t.description, parameters: t.parameters },
                })),
                tool_choice: toolChoiceOf(toolRounds === 0 ? req.toolChoice : 'auto', tools),
              }
            : {}),
          ...(outputSchema
            ? {
                response_format: {
                  type: 'json_schema' as const,
                  json_schema: { name: 'step_output', schema: outputSchema, strict: false },
                },
              }
            : {}),
          ...(reasoning && req.reasoning !== 'none'
            ? { reasoning_effort: req.reasoning as 'low' | 'medium' | 'high' }
            : {}),
        },
        { signal },
      );
    } catch (err) {
      const rejection = rejectionOf(err);
      throw rejection ? new ModelRejected(rejection) : err;
    }
    modelCalls++;
    // No heartbeat here: the interval in answerStep beats while the step runs longer than its period, and a
    // heartbeat after every call was one more request to the Temporal server per step (issue 12).
    if (completion.usage)
      usage.push({
        model: completion.model || req.model,
        promptTokens: completion.usage.prompt_tokens,
        completionTokens: completion.usage.completion_tokens,
      });
    const message = completion.choices[0]?.message;
    const calls: ChatToolCall[] = (message?.tool_calls ?? []).flatMap((t) =>
      t.type === 'function' ? [{ id: t.id, name: t.function.name, arguments: t.function.arguments }] : [],
    );
    if (calls.length && tools.length) {
      toolRounds++;
      messages.push({ role: 'assistant', content: message?.content ?? null, toolCalls: calls });
      for (const call of calls)
        messages.push({ role: 'tool', toolCallId: call.id, content: await runTool(call) });
      continue;
    }
    const content = message?.content ?? '';
    answers++;
    if (!validate) return { value: content, modelCalls, usage };
    let value: unknown;
    try {
      value = JSON.parse(content);
    } catch {
      // A model stopped by its token limit leaves its JSON open: say that, not only that it is not JSON.
      problems =
        completion.choices[0]?.finish_reason === 'length'
          ? `the answer is not JSON: the model stopped at its token limit (${
              completion.usage?.completion_tokens ?? 'unknown'
            } tokens) before the JSON closed`
          : 'the answer is not JSON';
    }
    // The state is re-rendered (instructions, JSONPath, the run's view) by code that recurses into it.
    if (value !== undefined && jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      problems = `the answer nests deeper than ${MAX_JSON_DEPTH} levels`;
      value = undefined;
    }
    if (value !== undefined) {
      if (validate(value)) return { value, modelCalls, usage };
      problems = describe(validate.errors);
    }
    messages.push(
      { role: 'assistant', content },
      {
        role: 'user',
        content:
          `Your answer does not fit the output schema: ${problems}. ` +
          'Answer again with only a JSON object that fits the schema.',
      },
    );
  }
  const spent: Spent = { modelCalls, usage };
  throw new StepFailed(
    `the answer did not fit the output schema after ${OUTPUT_ATTEMPTS} attempts: ${problems}`,
    spent,
  );
}
