import { expect } from 'chai';
import OpenAI from 'openai';
import type { RequestContext } from '@lib/auth/context';
import type { CreditsService } from '@lib/credits/credits.service';
import { AppError } from '@lib/errors';
import { answerSchema } from '@lib/chains/generated-step';
import { StepFromPromptService } from '@lib/chains/step-from-prompt.service';

/*
 * Writing a chain step from a prompt (docs/chains.md, from-prompt) against a fake model and fake credits: the
 * request the model gets, the model billed (the one that answered, else the one asked), a refusal or an empty
 * answer asked again once, and what a failed call says (never the model server's own words).
 */
const ctx = { organizationId: 'org_a', userId: 'usr_a' } as RequestContext;
const step = {
  name: 'Summarise',
  description: 'Summarises the text.',
  instructions: 'Summarise {{input.text}}',
  reasoning: 'low',
  outputSchema: { type: 'object', properties: { summary: { type: 'string' } } },
};

type Answer = Partial<OpenAI.Chat.ChatCompletion> | Error;

function world(answers: Answer[], timeoutMs = 1500) {
  const requests: Array<{ body: OpenAI.Chat.ChatCompletionCreateParams; options: unknown }> = [];
  const billed: Array<{ model: string; usage: unknown }> = [];
  const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const llm = {
    chat: {
      completions: {
        create: (body: OpenAI.Chat.ChatCompletionCreateParams, options: unknown) => {
          // the messages as they were when asked (the service goes on adding to its list)
          requests.push({ body: structuredClone(body), options });
          const answer = answers.shift();
          return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
        },
      },
    },
  } as unknown as OpenAI;
  let balance = 100;
  const credits = {
    requireCredits: () => Promise.resolve(),
    recordUsage: (_org: string, call: { model: string; usage: unknown }) => {
      billed.push({ model: call.model, usage: call.usage });
      balance -= 1;
      return Promise.resolve({ usageId: 'u', promptTokens: 10, completionTokens: 5, cost: 1, balance });
    },
  } as unknown as CreditsService;
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => warnings.push({ fields, message }),
  };
  const service = new StepFromPromptService(
    llm,
    credits,
    { model: 'gpt-4o-mini', timeoutMs },
    logger as never,
  );
  return { service, requests, billed, warnings };
}

const answer = (content: string | null, extra: Partial<OpenAI.Chat.ChatCompletionMessage> = {}, model = '') =>
  ({
    model,
    choices: [
      { index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content, ...extra } },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  }) as unknown as OpenAI.Chat.ChatCompletion;

async function failure(call: Promise<unknown>) {
  try {
    await call;
  } catch (err) {
    const e = err as AppError;
    return { status: e.status, code: e.code, message: e.message, details: e.details };
  }
  throw new Error('succeeded');
}

describe('writing a chain step from a prompt', () => {
  it('asks for the step schema by name, with the configured timeout, and bills the model that answered', async () => {
    const w = world([answer(JSON.stringify(step), {}, 'gpt-4o-mini-2024-07-18')]);
    const result = await w.service.generate(ctx, { prompt: 'Summarise it' });
    expect(result.step).to.deep.equal(step);
    expect(result.usage).to.deep.equal({
      modelCalls: 1,
      promptTokens: 10,
      completionTokens: 5,
      cost: 1,
      balance: 99,
    });
    const [{ body, options }] = w.requests as [(typeof w.requests)[0]];
    expect(body.model).to.equal('gpt-4o-mini');
    expect(body.response_format).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'chain_step', schema: answerSchema(false), strict: false },
    });
    expect(options).to.deep.equal({ timeout: 1500 });
    expect(w.billed.map((b) => b.model)).to.deep.equal(['gpt-4o-mini-2024-07-18']);
  });

  it('asks again once after a refusal or an answer with no message, and bills the model asked when none is named', async () => {
    const w = world([answer(null, { refusal: 'I cannot help with that' }), { model: '', choices: [] }]);
    expect(await failure(w.service.generate(ctx, { prompt: 'x', isFirstStep: true }))).to.deep.equal({
      status: 502,
      code: 'model_invalid_answer',
      message: 'the model answered 2 times with a step that cannot be used: the answer is empty',
      details: {
        problems: ['the answer is empty'],
        usage: { modelCalls: 2, promptTokens: 20, completionTokens: 10, cost: 2, balance: 98 },
      },
    });
    // The refused answer goes back as an empty assistant turn, followed by what was wrong with it.
    const retried = w.requests[1]!.body.messages;
    expect(retried.at(-2)).to.deep.equal({ role: 'assistant', content: '' });
    expect(JSON.stringify(retried.at(-1))).to.contain('the model refused: I cannot help with that');
    expect(w.requests[0]!.body.response_format).to.deep.include({
      json_schema: { name: 'chain_step', schema: answerSchema(true), strict: false },
    });
    expect(w.billed.map((b) => b.model)).to.deep.equal(['gpt-4o-mini', 'gpt-4o-mini']);
  });

  it("says what failed in a model call without the model server's words, and logs it", async () => {
    const apiError = (status: number, code?: string) =>
      new OpenAI.APIError(
        status,
        code ? { code, message: 'secret account words' } : undefined,
        'secret',
        new Headers(),
      );
    const cases: Array<[Error, string]> = [
      [new OpenAI.APIConnectionTimeoutError(), 'the model did not answer within 2 s; try again later'],
      [
        new OpenAI.APIConnectionError({ message: 'ECONNREFUSED' }),
        'the model server could not be reached; try again later',
      ],
      [
        apiError(429, 'rate_limit_exceeded'),
        'the model server answered HTTP 429 (rate_limit_exceeded); try again later',
      ],
      [apiError(500), 'the model server answered HTTP 500; try again later'],
      [new Error('socket hang up'), 'the model call failed; try again later'],
      // aborted: an API error without a status is no answer of the model server either
      [new OpenAI.APIUserAbortError(), 'the model call failed; try again later'],
      // a status alone does not make an answer of the model server
      [Object.assign(new Error('odd'), { status: 503 }), 'the model call failed; try again later'],
    ];
    for (const [err, expected] of cases) {
      const w = world([err]);
      expect(await failure(w.service.generate(ctx, { prompt: 'x' })), expected).to.deep.include({
        status: 502,
        code: 'model_error',
        message: expected,
      });
      expect(w.warnings).to.deep.equal([
        {
          fields: { err, organizationId: 'org_a', model: 'gpt-4o-mini' },
          message: 'chain step generation: the model call failed',
        },
      ]);
    }
  });

  it('lists every problem of the second answer, and works without a logger', async () => {
    const twoProblems = JSON.stringify({ ...step, name: ' ', reasoning: 'extreme' });
    const w = world([answer(twoProblems), answer(twoProblems)]);
    const refused = await failure(w.service.generate(ctx, { prompt: 'x' }));
    expect(refused.message).to.equal(
      'the model answered 2 times with a step that cannot be used: name must not be blank; reasoning must be one of none, low, medium, high',
    );
    const quiet = new StepFromPromptService(
      { chat: { completions: { create: () => Promise.reject(new Error('down')) } } } as unknown as OpenAI,
      { requireCredits: () => Promise.resolve() } as unknown as CreditsService,
      { model: 'm', timeoutMs: 1000 },
    );
    expect((await failure(quiet.generate(ctx, { prompt: 'x' }))).message).to.equal(
      'the model call failed; try again later',
    );
  });

  it('takes context of exactly 50,000 characters as JSON, and refuses one more with where and how much', async () => {
    // {"t":""} is 8 characters
    const exactly = { t: 'x'.repeat(50_000 - 8) };
    expect(JSON.stringify(exactly)).to.have.length(50_000);
    const w = world([answer(JSON.stringify(step))]);
    await w.service.generate(ctx, { prompt: 'x', workflowInput: exactly, existingWorkflow: exactly });
    const over = { t: 'x'.repeat(50_000 - 7) };
    expect(
      await failure(world([]).service.generate(ctx, { prompt: 'x', existingWorkflow: over })),
    ).to.deep.equal({
      status: 400,
      code: 'validation_failed',
      message: 'request/body/existingWorkflow must be at most 50000 characters as JSON',
      details: [{ path: '/body/existingWorkflow', message: 'must be at most 50000 characters as JSON' }],
    });
    const both = await failure(
      world([]).service.generate(ctx, { prompt: 'x', workflowInput: over, existingWorkflow: over }),
    );
    expect(both.message).to.equal(
      'request/body/workflowInput must be at most 50000 characters as JSON; ' +
        'request/body/existingWorkflow must be at most 50000 characters as JSON',
    );
  });
});
