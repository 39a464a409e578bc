import OpenAI from 'openai';
import type { RequestContext } from '@lib/auth/context';
import type { CreditsService, RecordedUsage } from '@lib/credits/credits.service';
import { badRequest, ModelError } from '@lib/errors';
import type { Logger } from '@lib/logger';
import { answerSchema, checkAnswer, type GeneratedStep } from './generated-step';
import { retryMessage, stepPromptMessages, type StepPromptInput } from './step-prompt';

export interface StepGenerationSettings {
  model: string;
  timeoutMs: number;
}

/** The largest context object (`workflowInput`, `existingWorkflow`) a request may send, as JSON characters. */
export const MAX_CONTEXT_CHARS = 50_000;

/** An invalid answer is asked again once, with its problems. */
const ATTEMPTS = 2;

/**
 * Writes one chain step from a prompt with the model, in a JSON-schema structured answer that is checked (and
 * asked again once, with the problems, when it fails the checks). Every model call is billed to the
 * organization; the request starts only while its balance is positive.
 */
export class StepFromPromptService {
  constructor(
    private readonly llm: OpenAI,
    private readonly credits: CreditsService,
    private readonly settings: StepGenerationSettings,
    private readonly logger?: Logger,
  ) {}

  async generate(ctx: RequestContext, input: StepPromptInput) {
    checkContextSizes(input);
    const organizationId = ctx.organizationId;
    await this.credits.requireCredits(organizationId);
    const isFirstStep = input.isFirstStep === true;
    const messages = stepPromptMessages(input);
    const calls: RecordedUsage[] = [];
    let problems: string[] = [];
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const completion = await this.complete(ctx, messages, isFirstStep);
      calls.push(
        await this.credits.recordUsage(organizationId, {
          purpose: 'chain-from-prompt',
          // the model that answered: a server may resolve an alias, the local model answers whatever is asked
          model: completion.model || this.settings.model,
          usage: completion.usage,
          userId: ctx.userId,
        }),
      );
      const message = completion.choices[0]?.message;
      const content = message?.content ?? null;
      const check = message?.refusal
        ? { ok: false as const, problems: [`the model refused: ${message.refusal}`] }
        : checkAnswer(content, isFirstStep);
      if (check.ok) return { step: check.step, usage: total(calls) };
      problems = check.problems;
      messages.push({ role: 'assistant', content: content ?? '' }, retryMessage(problems));
    }
    throw new ModelError(
      `the model answered ${ATTEMPTS} times with a step that cannot be used: ${problems.join('; ')}`,
      'model_invalid_answer',
      { problems, usage: total(calls) },
    );
  }

  private async complete(
    ctx: RequestContext,
    messages: OpenAI.Chat.ChatCompletionMessageParam[],
    isFirstStep: boolean,
  ) {
    try {
      return await this.llm.chat.completions.create(
        {
          model: this.settings.model,
          messages,
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'chain_step', schema: answerSchema(isFirstStep), strict: false },
          },
        },
        { timeout: this.settings.timeoutMs },
      );
    } catch (err) {
      this.logger?.warn(
        { err, organizationId: ctx.organizationId, model: this.settings.model },
        'chain step generation: the model call failed',
      );
      throw new ModelError(`${modelFailure(err, this.settings.timeoutMs)}; try again later`);
    }
  }
}

/** What went wrong with the model call, without the model server's own words (they may describe our account). */
function modelFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof OpenAI.APIConnectionTimeoutError)
    return `the model did not answer within ${Math.round(timeoutMs / 1000)} s`;
  if (err instanceof OpenAI.APIConnectionError) return 'the model server could not be reached';
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const code = typeof err.code === 'string' ? ` (${err.code})` : '';
    return `the model server answered HTTP ${err.status}${code}`;
  }
  return 'the model call failed';
}

function checkContextSizes(input: StepPromptInput) {
  const problems = (['workflowInput', 'existingWorkflow'] as const)
    .filter((key) => input[key] !== undefined && JSON.stringify(input[key]).length > MAX_CONTEXT_CHARS)
    .map((key) => ({
      path: `/body/${key}`,
      message: `must be at most ${MAX_CONTEXT_CHARS} characters as JSON`,
    }));
  if (problems.length)
    throw badRequest(problems.map((p) => `request${p.path} ${p.message}`).join('; '), problems);
}

/** What the calls of one request used and cost, and the balance after the last. */
function total(calls: readonly RecordedUsage[]) {
  return {
    modelCalls: calls.length,
    promptTokens: calls.reduce((n, c) => n + c.promptTokens, 0),
    completionTokens: calls.reduce((n, c) => n + c.completionTokens, 0),
    cost: calls.reduce((n, c) => n + c.cost, 0),
    balance: calls.at(-1)?.balance ?? 0,
  };
}

export type { GeneratedStep, StepPromptInput };
