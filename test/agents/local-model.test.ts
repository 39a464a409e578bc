import { expect } from 'chai';
import type { ChatToolCall } from '@contracts';
import { answerStep, type StepAnswer, type StepModelRequest } from '@lib/chains/engine/step-model';
import { validatorFor } from '@lib/chains/step-fields';
import { localModelOf } from '@lib/llm';
import { createTestAgent } from '@test/helpers/agents';
import { localModelTestEnv } from '@test/helpers/env';
import { as } from '@test/helpers/org';
import { connectClient } from '@test/helpers/realtime';
import { useWorkerAndOrg } from '@test/helpers/worker';

/** The model call outside an activity: nothing to tell Temporal. */
const noHeartbeat = { heartbeat: () => undefined };

// The real local model (Gemma 3 270M on node-llama-cpp's CPU binary) answering through the service: no
// scripted answers. What it says is not asserted beyond being there and, for structured output, fitting its
// schema: a 270M model's answers are not reliably right.
describe('the local model as the chat provider', function () {
  // loading the model and CPU generation on a shared 2-core machine
  this.timeout(240_000);
  const suite = useWorkerAndOrg('Local Model Org', localModelTestEnv);

  /** One chain step's model call through the activity, on the local model. */
  const askStep = (
    request: Omit<StepModelRequest, 'model' | 'reasoning'>,
    runTool: (call: ChatToolCall) => Promise<string>,
  ): Promise<StepAnswer> =>
    answerStep(
      suite.env.deps.llm,
      { model: 'gpt-4o-mini', reasoning: 'none', ...request },
      runTool,
      noHeartbeat,
    );

  it('is the provider of an environment with LLM_PROVIDER=local, even with an OpenAI key set', () => {
    expect(suite.env.config.llm.provider).to.equal('local');
    expect(suite.env.config.llm.apiKey).to.not.equal('');
    expect(localModelOf(suite.env.deps.llm)).to.not.equal(undefined);
  });

  it('answers a turn: deltas and the stored reply arrive over socket.io, not empty', async () => {
    const { env, org } = suite;
    const { agentId } = await createTestAgent(env, org.organizationId, {
      instructions: 'You are a friendly assistant. Answer briefly.',
    });
    const client = await connectClient(env, org.organizationId, org.owner.token);
    try {
      const res = await as(env, org.owner.token)
        .post(org.path('/conversations'))
        .send({ agentId, message: 'What is the capital of France?' })
        .expect(201);
      const { requestId } = res.body as { requestId: string };
      const final = await client.waitFor(
        (e) =>
          e.payload.requestId === requestId && (e.payload.type === 'message' || e.payload.type === 'error'),
        200_000,
      );
      expect(final.payload.type, JSON.stringify(final.payload)).to.equal('message');
      const text = (final.payload as { message: { content: Array<{ text: string }> } }).message.content[0]!
        .text;
      expect(text.trim()).to.not.equal('');
      const deltas = client.turn(requestId).filter((e) => e.payload.type === 'delta');
      expect(deltas.length).to.be.greaterThan(0);
      expect(deltas.map((d) => d.payload.text).join('')).to.equal(text);
    } finally {
      client.close();
    }
  });

  it("gives a chain step's structured output as JSON that validates against the step's schema", async () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 1 },
        country: { type: 'string' },
        population: { type: 'integer', minimum: 0 },
        landmarks: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        capital: { type: 'boolean' },
      },
      required: ['city', 'country', 'population', 'landmarks', 'capital'],
      additionalProperties: false,
    };
    const answer = await askStep(
      {
        messages: [
          { role: 'user' as const, content: 'Describe Paris: its country, population and landmarks.' },
        ],
        tools: [],
        toolChoice: null,
        outputSchemaJson: JSON.stringify(schema),
      },
      () => Promise.resolve(''),
    );
    const validate = validatorFor(JSON.stringify(schema));
    expect(validate(answer.value), JSON.stringify(validate.errors)).to.equal(true);
    expect(answer.usage[0]!.completionTokens).to.be.greaterThan(0);
  });

  it('calls the tool a chain step names, with arguments that fit its parameters, then answers in text', async () => {
    const calls: ChatToolCall[] = [];
    const answer = await askStep(
      {
        messages: [{ role: 'user' as const, content: 'What is the weather in Oslo today?' }],
        tools: [
          {
            name: 'get_weather',
            description: 'The current weather of a city',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' } },
              required: ['city'],
              additionalProperties: false,
            },
            executor: 'server' as const,
          },
        ],
        toolChoice: 'get_weather',
        outputSchemaJson: null,
      },
      (call: ChatToolCall) => {
        calls.push(call);
        return Promise.resolve('Rain, 12 degrees.');
      },
    );
    expect(calls).to.have.length(1);
    expect(calls[0]!.name).to.equal('get_weather');
    const args = JSON.parse(calls[0]!.arguments) as { city?: unknown };
    expect(Object.keys(args)).to.deep.equal(['city']);
    expect(args.city).to.be.a('string');
    // after the call the tool choice is `auto`, which the local model answers in text
    expect(answer.modelCalls).to.equal(2);
    expect(answer.value).to.be.a('string');
  });
});
