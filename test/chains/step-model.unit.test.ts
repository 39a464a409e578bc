import { expect } from 'chai';
import OpenAI from 'openai';
import { ModelRejected, StepFailed } from '@lib/chains/engine/errors';
import { answerStep, type StepModelRequest } from '@lib/chains/engine/step-model';
import { attempt, schemaOf, ScriptedModel, type Reply } from './engine-world';

const request = (fields: Partial<StepModelRequest> = {}): StepModelRequest => ({
  model: 'gpt-test',
  reasoning: 'none',
  messages: [{ role: 'user', content: 'Classify: hi' }],
  tools: [],
  toolChoice: null,
  outputSchemaJson: schemaOf('category'),
  ...fields,
});

async function ask(
  replies: Reply[],
  fields: Partial<StepModelRequest> = {},
  runTool = () => Promise.resolve('"tool said"'),
) {
  const model = new ScriptedModel(replies);
  const outcome = await answerStep(model.client(), request(fields), runTool, attempt()).then(
    (answer) => ({ answer, err: undefined }),
    (err: unknown) => ({ answer: undefined, err }),
  );
  return { ...outcome, requests: model.requests };
}

const sentBack = (problems: string) => ({
  role: 'user',
  content: `Your answer does not fit the output schema: ${problems}. Answer again with only a JSON object that fits the schema.`,
});

// docs/chains.md "State": the model answers in the step's outputSchema; an answer that does not fit is sent back
// with what was wrong, at most 3 answers, then the run fails naming the problems (the calls made are billed).
describe("a chain step's model conversation (engine, scripted model)", () => {
  it('answers with the text of a step without an output schema, and its usage', async () => {
    const { answer, requests } = await ask([{ content: 'plain text' }], { outputSchemaJson: null });
    expect(answer).to.deep.equal({
      value: 'plain text',
      modelCalls: 1,
      usage: [{ model: 'gpt-test', promptTokens: 10, completionTokens: 5 }],
    });
    expect(requests[0]).to.deep.equal({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Classify: hi' }],
    });
  });

  it('asks for the output schema as a json_schema response format and parses the answer', async () => {
    const { answer, requests } = await ask([{ content: '{"category":"billing","extra":1}' }]);
    expect(answer!.value).to.deep.equal({ category: 'billing', extra: 1 });
    expect(requests[0]!.response_format).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'step_output', schema: JSON.parse(schemaOf('category')), strict: false },
    });
  });

  it('sends back what was wrong and accepts the third answer', async () => {
    const { answer, requests } = await ask([
      { content: 'not json' },
      { content: '{}' },
      { content: '{"category":"ok"}' },
    ]);
    expect(answer!.modelCalls).to.equal(3);
    expect(answer!.usage).to.have.length(3);
    const last = requests[2]!.messages as object[];
    expect(last.slice(1)).to.deep.equal([
      { role: 'assistant', content: 'not json' },
      sentBack('the answer is not JSON'),
      { role: 'assistant', content: '{}' },
      sentBack("(answer) must have required property 'category'"),
    ]);
  });

  it('fails after exactly 3 answers, naming the last problems and carrying the calls spent', async () => {
    const { err, requests } = await ask([
      { content: '{}' },
      { content: '{}' },
      { content: '{"category":5}', model: '' },
      { content: '{"category":"never asked"}' },
    ]);
    expect(requests).to.have.length(3);
    expect(err).to.be.instanceOf(StepFailed);
    expect((err as Error).message).to.equal(
      'the answer did not fit the output schema after 3 attempts: /category must be string',
    );
    // A completion that names no model is billed as the model asked.
    expect((err as StepFailed).spent).to.deep.equal({
      modelCalls: 3,
      usage: [1, 2, 3].map(() => ({ model: 'gpt-test', promptTokens: 10, completionTokens: 5 })),
    });
  });

  it('says an answer cut at the token limit stopped there, with its tokens (or unknown)', async () => {
    const { err } = await ask([
      {
        content: '{"category":"bill',
        finishReason: 'length',
        usage: { prompt_tokens: 3, completion_tokens: 64 },
      },
      { content: '{"category":"bill', finishReason: 'length' },
      { content: '{"category":"bill', finishReason: 'length', usage: null },
    ]);
    expect((err as Error).message).to.equal(
      'the answer did not fit the output schema after 3 attempts: the answer is not JSON: the model stopped at ' +
        'its token limit (unknown tokens) before the JSON closed',
    );
    expect((err as StepFailed).spent!.modelCalls).to.equal(3);
    expect((err as StepFailed).spent!.usage).to.deep.equal([
      { model: 'gpt-test', promptTokens: 3, completionTokens: 64 },
      { model: 'gpt-test', promptTokens: 10, completionTokens: 5 },
    ]);
  });

  it('names the token count of an answer cut at the limit', async () => {
    const { requests } = await ask([
      { content: '{"category', finishReason: 'length', usage: { prompt_tokens: 3, completion_tokens: 64 } },
      { content: '{"category":"ok"}' },
    ]);
    expect((requests[1]!.messages as object[])[2]).to.deep.equal(
      sentBack(
        'the answer is not JSON: the model stopped at its token limit (64 tokens) before the JSON closed',
      ),
    );
  });

  it('sends back an answer nested deeper than 32 levels, and takes one of exactly 32', async () => {
    const nest = (levels: number) =>
      '{"category":"x","n":'.concat('['.repeat(levels - 1), ']'.repeat(levels - 1), '}');
    const { requests, answer } = await ask([{ content: nest(33) }, { content: nest(32) }]);
    expect((requests[1]!.messages as object[])[2]).to.deep.equal(
      sentBack('the answer nests deeper than 32 levels'),
    );
    expect(answer!.modelCalls).to.equal(2);
  });

  it('names every problem of an answer, one after the other', async () => {
    const { requests } = await ask([{ content: '{}' }, { content: '{"category":"a","topic":"b"}' }], {
      outputSchemaJson: schemaOf('category', 'topic'),
    });
    expect((requests[1]!.messages as object[])[2]).to.deep.equal(
      sentBack(
        "(answer) must have required property 'category'; (answer) must have required property 'topic'",
      ),
    );
  });

  it('reads a completion without a choice, or without text, as an empty answer', async () => {
    // The chat-completions type allows both: an empty text, not a crash, is what the step then sees.
    for (const reply of [{ noChoice: true }, { content: null }]) {
      const { answer } = await ask([reply], { outputSchemaJson: null });
      expect(answer).to.deep.include({ value: '', modelCalls: 1 });
    }
    const { requests, answer } = await ask([{ noChoice: true }, { content: '{"category":"ok"}' }]);
    expect((requests[1]!.messages as object[]).slice(1)).to.deep.equal([
      { role: 'assistant', content: '' },
      sentBack('the answer is not JSON'),
    ]);
    expect(answer!.value).to.deep.equal({ category: 'ok' });
  });

  it('turns a refusal of the request into ModelRejected, and lets a retryable error through', async () => {
    const rejected = await ask([
      { error: new OpenAI.APIError(400, { message: 'bad schema' }, undefined, new Headers()) },
    ]);
    expect(rejected.err).to.be.instanceOf(ModelRejected);
    expect((rejected.err as Error).message).to.equal('the model rejected the request (400): 400 bad schema');
    const busy = new OpenAI.APIError(429, { message: 'slow down' }, undefined, new Headers());
    expect((await ask([{ error: busy }])).err).to.equal(busy);
  });

  it('asks a reasoning model with the step reasoning effort, and no other model', async () => {
    const o3 = await ask([{ content: '{"category":"a"}' }], { model: 'o3', reasoning: 'high' });
    expect(o3.requests[0]!.reasoning_effort).to.equal('high');
    const none = await ask([{ content: '{"category":"a"}' }], { model: 'o3', reasoning: 'none' });
    expect(none.requests[0]).to.not.have.property('reasoning_effort');
    const plain = await ask([{ content: '{"category":"a"}' }], { reasoning: 'high' });
    expect(plain.requests[0]).to.not.have.property('reasoning_effort');
  });
});
