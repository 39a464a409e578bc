import { expect } from 'chai';
import OpenAI from 'openai';
import { startScriptedLlm, type ScriptedLlm } from '@test/helpers/llm';

// The scripted LLM stands in for OpenAI in agent and chain tests, so it must hold up against the real SDK.
describe('scripted OpenAI-compatible server', () => {
  let llm: ScriptedLlm;
  let client: OpenAI;

  before(async () => {
    llm = await startScriptedLlm({ dimensions: 48 });
  });
  beforeEach(() => {
    llm.reset();
    client = new OpenAI({ baseURL: llm.baseURL, apiKey: llm.apiKey, maxRetries: 0 });
  });
  after(() => llm.close());

  const weatherTool: OpenAI.Chat.ChatCompletionTool = {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };

  it('streams content deltas in order that concatenate to the scripted text, then usage', async () => {
    llm.enqueue({
      content: 'Hello there, general Kenobi.',
      chunks: ['Hello', ' there,', ' general', ' Kenobi.'],
    });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      temperature: 0.2,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas).to.deep.equal(['Hello', ' there,', ' general', ' Kenobi.']);
    expect(finish).to.equal('stop');
    expect(usage?.completion_tokens).to.equal(4);
    const sent = llm.chatRequests[0];
    expect(sent).to.include({ model: 'gpt-4o-mini', temperature: 0.2, stream: true });
    expect(sent?.messages).to.deep.equal([{ role: 'user', content: 'hi' }]);
  });

  it('splits unchunked content into several deltas and answers from the default responder when idle', async () => {
    llm.enqueue({ content: 'one two three' });
    const stream = client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const deltas: string[] = [];
    stream.on('content', (d) => deltas.push(d));
    const done = await stream.finalChatCompletion();
    expect(deltas).to.have.length(3);
    expect(done.choices[0]?.message.content).to.equal('one two three');

    const echo = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'ping' }],
    });
    expect(echo.choices[0]?.message.content).to.equal('ping');
    expect(llm.pending).to.equal(0);
  });

  it('returns a non-streamed tool call whose arguments parse as JSON, then the final answer', async () => {
    llm.enqueue({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' }, id: 'call_1' }] });
    llm.enqueue((body) => {
      const toolMsg = body.messages.find((m) => m.role === 'tool');
      return { content: `It is ${typeof toolMsg?.content === 'string' ? toolMsg.content : '?'} in Paris.` };
    });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather in Paris?' },
    ];
    const first = await client.chat.completions.create({ model: 'gpt-4o', messages, tools: [weatherTool] });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).to.equal('tool_calls');
    const call = choice.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.id).to.equal('call_1');
    expect(call.function.name).to.equal('get_weather');
    expect(JSON.parse(call.function.arguments)).to.deep.equal({ city: 'Paris' });

    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: 'sunny' });
    const second = await client.chat.completions.create({ model: 'gpt-4o', messages, tools: [weatherTool] });
    expect(second.choices[0]?.message.content).to.equal('It is sunny in Paris.');
    expect(llm.chatRequests[0]?.tools).to.deep.equal([weatherTool]);
    expect(llm.chatRequests[1]?.messages.at(-1)).to.deep.equal({
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'sunny',
    });
  });

  it('streams tool calls in pieces that the SDK reassembles, two calls by index', async () => {
    llm.enqueue({
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Lyon', unit: 'celsius' } },
        { name: 'get_weather', arguments: '{"city":"Nice"}' },
      ],
    });
    const stream = client.chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Lyon and Nice?' }],
      tools: [weatherTool],
    });
    let argDeltas = 0;
    for await (const chunk of stream) argDeltas += chunk.choices[0]?.delta.tool_calls?.length ?? 0;
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0]?.message.tool_calls ?? [];
    expect(final.choices[0]?.finish_reason).to.equal('tool_calls');
    expect(argDeltas).to.be.greaterThan(2);
    expect(
      calls.map((c): unknown => (c.type === 'function' ? JSON.parse(c.function.arguments) : null)),
    ).to.deep.equal([{ city: 'Lyon', unit: 'celsius' }, { city: 'Nice' }]);
    expect(new Set(calls.map((c) => c.id)).size).to.equal(2);
  });

  it('surfaces a scripted 429 as RateLimitError without retries', async () => {
    llm.enqueue({ error: { status: 429, message: 'slow down' } });
    const err = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).status).to.equal(429);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).message).to.contain('slow down');
    expect(llm.requests).to.have.length(1);
  });

  it('lets the SDK retry a 429 and succeed on the next scripted reply', async () => {
    llm.enqueue({ error: { status: 429, message: 'slow down', retryAfterMs: 10 } }, { content: 'made it' });
    const retrying = new OpenAI({ baseURL: llm.baseURL, apiKey: llm.apiKey, maxRetries: 1 });
    const res = await retrying.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.choices[0]?.message.content).to.equal('made it');
    expect(llm.chatRequests).to.have.length(2);
  });

  it('routes by model with on() before the queue', async () => {
    llm.on({ model: 'classifier' }, { content: 'spam' });
    llm.enqueue({ content: 'queued' });
    const ask = (model: string) =>
      client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'x' }] })
        .then((r) => r.choices[0]?.message.content);
    expect(await ask('classifier')).to.equal('spam');
    expect(await ask('gpt-4o')).to.equal('queued');
    expect(await ask('classifier')).to.equal('spam');
  });

  it('returns deterministic embeddings of the configured dimension (base64 and float)', async () => {
    const res = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['the cat sat', 'the cat sat', 'quarterly revenue report'],
    });
    const [a, b, c] = res.data.map((d) => d.embedding);
    expect(a).to.have.length(48);
    expect(a).to.deep.equal(b);
    expect(a).to.not.deep.equal(c);
    const norm = Math.hypot(...a!);
    expect(norm).to.be.closeTo(1, 1e-5);

    const floats = await client.embeddings.create({
      model: 'e',
      input: 'the cat sat',
      encoding_format: 'float',
    });
    const single = floats.data[0]!.embedding;
    single.forEach((v, i) => expect(v).to.be.closeTo(a![i]!, 1e-6));
    const wide = await client.embeddings.create({ model: 'e', input: 'x', dimensions: 256 });
    expect(wide.data[0]?.embedding).to.have.length(256);
  });

  it('fails scripted embedding requests with the given status', async () => {
    llm.failEmbeddings({ status: 500, message: 'boom' });
    const err = await client.embeddings.create({ model: 'e', input: 'x' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.InternalServerError);
    expect((await client.embeddings.create({ model: 'e', input: 'x' })).data).to.have.length(1);
  });

  it('returns json_schema content as scripted, parseable by the SDK', async () => {
    const schema = {
      type: 'object',
      properties: { title: { type: 'string' }, score: { type: 'number' } },
      required: ['title', 'score'],
      additionalProperties: false,
    };
    llm.enqueue({ content: JSON.stringify({ title: 'Report', score: 0.9 }) });
    const res = await client.chat.completions.parse({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'summarise' }],
      response_format: { type: 'json_schema', json_schema: { name: 'summary', schema, strict: true } },
    });
    expect(res.choices[0]?.message.parsed).to.deep.equal({ title: 'Report', score: 0.9 });
    expect(llm.chatRequests[0]?.response_format).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'summary', schema, strict: true },
    });
  });

  it('lists models and rejects a wrong API key when one is configured', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).to.include('gpt-4o-mini');

    const guarded = await startScriptedLlm({ apiKey: 'sk-right' });
    try {
      const wrong = new OpenAI({ baseURL: guarded.baseURL, apiKey: 'sk-wrong', maxRetries: 0 });
      const err = await wrong.models.list().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.AuthenticationError);
    } finally {
      await guarded.close();
    }
  });
});
