import { expect } from 'chai';
import type { ChatToolCall, ModelTool } from '@contracts';
import { StepFailed } from '@lib/chains/engine/errors';
import { answerStep, type StepModelRequest } from '@lib/chains/engine/step-model';
import { attempt, ScriptedModel, type Reply } from './engine-world';

const tool = (name: string): ModelTool => ({
  name,
  description: `the ${name} tool`,
  parameters: { type: 'object', properties: {} },
  executor: 'server',
});

const asked = {
  type: 'function',
  function: {
    name: 'lookup',
    description: 'the lookup tool',
    parameters: { type: 'object', properties: {} },
  },
};

const callOf = (id: string): Reply => ({ toolCalls: [{ id, name: 'lookup', arguments: '{"q":1}' }] });

async function ask(replies: Reply[], fields: Partial<StepModelRequest>) {
  const model = new ScriptedModel(replies);
  const calls: ChatToolCall[] = [];
  const req: StepModelRequest = {
    model: 'gpt-test',
    reasoning: 'none',
    messages: [{ role: 'user', content: 'go' }],
    tools: [tool('lookup')],
    toolChoice: null,
    outputSchemaJson: null,
    ...fields,
  };
  const runTool = (call: ChatToolCall) => {
    calls.push(call);
    return Promise.resolve(`result of ${call.id}`);
  };
  const outcome = await answerStep(model.client(), req, runTool, attempt()).then(
    (answer) => ({ answer, err: undefined }),
    (err: unknown) => ({ answer: undefined, err }),
  );
  return { ...outcome, calls, requests: model.requests };
}

// docs/chains.md "Attachments": the step's tools, under toolChoice; a step gets 8 model/tool rounds before it must
// answer without tools (STEP_TOOL_ROUNDS).
describe("a chain step's tool rounds (engine, scripted model)", () => {
  it('runs a tool call and sends its result back, the first round under toolChoice and the next ones auto', async () => {
    const { answer, calls, requests } = await ask([callOf('c1'), { content: 'done' }], {
      toolChoice: 'required',
    });
    expect(answer).to.deep.include({ value: 'done', modelCalls: 2 });
    expect(calls).to.deep.equal([{ id: 'c1', name: 'lookup', arguments: '{"q":1}' }]);
    expect(requests[0]).to.deep.include({ tools: [asked], tool_choice: 'required' });
    expect(requests[1]).to.deep.include({ tool_choice: 'auto' });
    expect(requests[1]!.messages).to.deep.equal([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'result of c1' },
    ]);
  });

  it('forces the tool toolChoice names, and fails a step whose toolChoice names a tool not attached', async () => {
    const forced = await ask([{ content: 'x' }], { toolChoice: 'lookup' });
    expect(forced.requests[0]!.tool_choice).to.deep.equal({ type: 'function', function: { name: 'lookup' } });
    for (const choice of ['auto', 'none']) {
      const named = await ask([{ content: 'x' }], { toolChoice: choice });
      expect(named.requests[0]!.tool_choice).to.equal(choice);
    }
    const missing = await ask([{ content: 'x' }], {
      toolChoice: 'search',
      tools: [tool('lookup'), tool('fetch')],
    });
    expect(missing.err).to.be.instanceOf(StepFailed);
    expect((missing.err as Error).message).to.equal(
      'toolChoice names search, which is not attached to the step (attached: lookup, fetch)',
    );
    expect(missing.requests).to.have.length(0);
  });

  it('forces any attached tool toolChoice names, not only the first', async () => {
    const { requests } = await ask([{ content: 'x' }], {
      toolChoice: 'fetch',
      tools: [tool('lookup'), tool('fetch')],
    });
    expect(requests[0]!.tool_choice).to.deep.equal({ type: 'function', function: { name: 'fetch' } });
  });

  it('runs no call of a tool type other than function, and takes the text as the answer', async () => {
    const { answer, calls, requests } = await ask(
      [{ content: 'done', toolCalls: [{ id: 'c1', name: 'grammar', arguments: 'x', type: 'custom' }] }],
      {},
    );
    expect(calls).to.deep.equal([]);
    expect(requests).to.have.length(1);
    expect(answer).to.deep.include({ value: 'done', modelCalls: 1 });
  });

  it('sends no tools and no tool_choice when the step has no tools', async () => {
    const { requests } = await ask([{ content: 'x' }], { tools: [], toolChoice: 'search' });
    expect(requests[0]).to.deep.equal({ model: 'gpt-test', messages: [{ role: 'user', content: 'go' }] });
  });

  it('leaves out tool_choice when the step names none', async () => {
    const { requests } = await ask([{ content: 'x' }], {});
    expect(requests[0]).to.have.property('tools');
    expect(requests[0]!.tool_choice).to.equal(undefined);
  });

  it('takes away the tools after 8 rounds, and reads a tool call without tools as the answer', async () => {
    const replies = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => ({ ...callOf(`c${n}`), content: `text ${n}` }));
    const { answer, calls, requests } = await ask(replies, {});
    expect(calls).to.have.length(8);
    expect(requests).to.have.length(9);
    expect(requests[7]).to.have.property('tools');
    expect(requests[8]).to.not.have.property('tools');
    // What the model said alongside its tool call stays in the conversation.
    expect((requests[1]!.messages as object[])[1]).to.deep.include({ role: 'assistant', content: 'text 1' });
    expect(answer).to.deep.include({ value: 'text 9', modelCalls: 9 });
  });

  it('does not count tool rounds as answers to the output schema', async () => {
    const schema = JSON.stringify({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
    const { err, requests } = await ask(
      [callOf('c1'), { content: '{}' }, callOf('c2'), { content: '{}' }, { content: '{}' }],
      {
        outputSchemaJson: schema,
      },
    );
    expect(requests).to.have.length(5);
    expect((err as StepFailed).spent!.modelCalls).to.equal(5);
  });
});
