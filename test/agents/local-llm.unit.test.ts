import { expect } from 'chai';
import OpenAI from 'openai';
import { loadConfig } from '@lib/config';
import { createLlmClient } from '@lib/llm';
import { toGrammarSchema, toolCallSchema } from '@lib/local-llm/grammar-schema';
import { promptParts, render } from '@lib/local-llm/prompt';

const base = { JWT_SECRET: 'x'.repeat(32) };

describe('the chat provider choice', () => {
  it('is the local model without an OpenAI key, the server with one, and LLM_PROVIDER wins', () => {
    expect(loadConfig(base).llm.provider).to.equal('local');
    expect(loadConfig({ ...base, OPENAI_API_KEY: 'sk-x' }).llm.provider).to.equal('openai');
    expect(loadConfig({ ...base, OPENAI_API_KEY: 'sk-x', LLM_PROVIDER: 'local' }).llm.provider).to.equal(
      'local',
    );
    // a keyless OpenAI-compatible server (a local llama.cpp or vLLM server, say)
    expect(loadConfig({ ...base, LLM_PROVIDER: 'openai' }).llm.provider).to.equal('openai');
    expect(() => loadConfig({ ...base, LLM_PROVIDER: 'ollama' })).to.throw('LLM_PROVIDER');
    expect(() => loadConfig({ ...base, LOCAL_LLM_CONCURRENCY: '0' })).to.throw('LOCAL_LLM_CONCURRENCY');
  });

  it('loads nothing until the first call, which fails as a 500 API error naming the missing file', async () => {
    const settings = loadConfig({ ...base, LOCAL_LLM_MODEL_PATH: '/nonexistent/model.gguf' }).llm;
    const client = createLlmClient(settings);
    const err = await client.chat.completions
      .create({ model: 'any', messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => expect.fail('answered without a model'),
        (e: unknown) => e,
      );
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(500);
    expect((err as Error).message).to.contain('/nonexistent/model.gguf');
  });

  it('refuses what the local model cannot do with a 4xx before loading it', async () => {
    const client = createLlmClient(loadConfig({ ...base, LOCAL_LLM_MODEL_PATH: '/nonexistent' }).llm);
    const image = await client.chat.completions
      .create({
        model: 'any',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] }],
      })
      .catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(image).to.include({ status: 400 });
    expect((image as Error).message).to.contain('reads text only');
    const embeddings = await client.embeddings
      .create({ model: 'any', input: ['a'] })
      .catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(embeddings).to.include({ status: 404 });
    expect((embeddings as Error).message).to.contain('EMBEDDINGS_PROVIDER=local');
  });
});

describe('the local model prompt and grammar', () => {
  it('renders the conversation as a transcript ending on the answer cue, with tool calls and results', () => {
    const parts = promptParts(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'rain' },
      ],
      ['Answer with JSON.'],
    );
    expect(render(parts)).to.equal(
      'Be brief.\n\nAnswer with JSON.\n\n' +
        'User: Weather in Oslo?\n' +
        'Assistant: (calls the tool weather with {"city":"Oslo"})\n' +
        'Tool result (weather): rain\n' +
        'Assistant:',
    );
    expect(render(parts, 2)).to.equal(
      'Be brief.\n\nAnswer with JSON.\n\nTool result (weather): rain\nAssistant:',
    );
  });

  it('keeps what a grammar can hold of a JSON Schema and drops the rest', () => {
    expect(
      toGrammarSchema({
        type: 'object',
        properties: {
          n: { type: 'integer', minimum: 0 },
          tag: { anyOf: [{ type: 'string', pattern: '^a' }, { type: 'null' }] },
          kind: { enum: ['a', 'b'] },
          when: { type: 'string', format: 'date' },
          maybe: { type: ['string', 'null'] },
          list: { type: 'array', items: { $ref: '#/definitions/item' }, maxItems: 2 },
          free: { type: 'object' },
        },
        required: ['n', 'ghost'],
        definitions: { item: { type: 'string', maxLength: 5 } },
      }),
    ).to.deep.equal({
      type: 'object',
      properties: {
        n: { type: 'integer' },
        tag: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        kind: { enum: ['a', 'b'] },
        when: { type: 'string', format: 'date' },
        maybe: { type: ['string', 'null'] },
        list: { type: 'array', items: { $ref: '#/$defs/item' }, maxItems: 2 },
        free: { type: 'object', properties: {}, additionalProperties: true },
      },
      required: ['n'],
      additionalProperties: false,
      $defs: { item: { type: 'string', maxLength: 5 } },
    });
  });

  it('makes a forced tool call one JSON object naming a tool and holding its arguments', () => {
    const schema = toolCallSchema([
      { name: 'a', parameters: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
      { name: 'b', parameters: undefined },
    ]);
    expect(schema.oneOf).to.have.length(2);
    expect((schema.oneOf as object[])[0]).to.deep.equal({
      type: 'object',
      properties: {
        name: { const: 'a' },
        arguments: {
          type: 'object',
          properties: { x: { type: 'number' } },
          required: ['x'],
          additionalProperties: false,
        },
      },
      required: ['name', 'arguments'],
      additionalProperties: false,
    });
  });
});
