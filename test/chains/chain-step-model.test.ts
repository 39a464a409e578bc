import { expect } from 'chai';
import { answerStep, type StepAnswer, type StepModelRequest } from '@lib/chains/engine/step-model';
import { createLlmClient } from '@lib/llm';
import { startScriptedLlm, type ScriptedLlm } from '@test/helpers/llm';

/** The model call outside an activity: nothing to tell Temporal. */
const noHeartbeat = { heartbeat: () => undefined };

describe('a chain step asking the model', () => {
  let llm: ScriptedLlm;
  before(async () => {
    llm = await startScriptedLlm();
  });
  after(() => llm.close());
  beforeEach(() => llm.reset());

  const ask = (req: Partial<StepModelRequest>): Promise<StepAnswer> =>
    answerStep(
      createLlmClient({ baseUrl: llm.baseURL, apiKey: llm.apiKey }),
      {
        model: 'gpt-4o-mini',
        reasoning: 'none',
        messages: [{ role: 'user' as const, content: 'hi' }],
        tools: [],
        toolChoice: null,
        outputSchemaJson: null,
        ...req,
      },
      () => Promise.resolve(''),
      noHeartbeat,
    );

  it("passes the step's reasoning effort to reasoning models, and none to others", async () => {
    llm.enqueue({ content: 'a' }, { content: 'b' }, { content: 'c' });
    await ask({ model: 'o4-mini', reasoning: 'high' });
    await ask({ model: 'o4-mini', reasoning: 'none' });
    await ask({ model: 'gpt-4o-mini', reasoning: 'high' });
    const [high, none, plain] = llm.chatRequests;
    expect(high).to.include({ reasoning_effort: 'high' });
    expect(none).to.not.have.property('reasoning_effort');
    expect(plain).to.not.have.property('reasoning_effort');
  });

  it('answers with the text and the token usage of each call when there is no output schema', async () => {
    llm.enqueue({ content: 'plain words here' });
    const answer = await ask({});
    expect(answer.value).to.equal('plain words here');
    expect(answer.modelCalls).to.equal(1);
    expect(answer.usage[0]).to.deep.include({ model: 'gpt-4o-mini', completionTokens: 3 });
    expect(llm.chatRequests[0]).to.not.have.property('response_format');
  });

  it('fails at once, naming the tool, when toolChoice names a tool the step does not have', async () => {
    const tools = [{ name: 'current_time', description: 'd', parameters: {}, executor: 'server' as const }];
    const err = await ask({ tools, toolChoice: 'http_request' }).then(
      () => expect.fail('asked the model'),
      (e: Error) => e,
    );
    expect(err.message).to.contain('toolChoice names http_request');
    expect(llm.chatRequests).to.have.length(0);
  });
});
