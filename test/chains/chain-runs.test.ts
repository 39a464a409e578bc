import { expect } from 'chai';
import { workflowIds } from '@contracts';
import { recordHistory } from '@test/helpers/histories';
import type { TestEnv } from '@test/helpers/env';
import { createRunnableChain, obj, runToEnd, str, userText } from '@test/helpers/chains';
import type { ChatRequest } from '@test/helpers/llm';
import { as, type TestOrg } from '@test/helpers/org';
import { useChainRunSuite } from '@test/chains/chain-run-suite';

describe('action chain runs', function () {
  this.timeout(120_000);
  const suite = useChainRunSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  it('runs steps in order: instructions rendered over the state, answers in the output schema', async () => {
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        name: 'classify',
        instructions: 'Classify: {{input.message}}',
        inputSchema: obj({ message: str }),
        outputSchema: obj({ category: { type: 'string', enum: ['billing', 'bug'] } }),
      },
      {
        stepOrder: 2,
        name: 'draft',
        instructions: 'Reply to a {{category}} message: {{input.message}} ({{json input}})',
        outputSchema: obj({ reply: str }),
      },
    ]);
    chain.answer((body) =>
      userText(body).startsWith('Classify')
        ? { content: JSON.stringify({ category: 'billing' }) }
        : { content: JSON.stringify({ reply: `re: ${userText(body)}` }) },
    );
    const run = await runToEnd(env, org, chain.chainId, { message: 'Wrong invoice' });
    expect(run.status).to.equal('success');
    expect(run.statusMessage).to.equal(null);
    expect(run.state).to.deep.equal({
      input: { message: 'Wrong invoice' },
      category: 'billing',
      reply: 're: Reply to a billing message: Wrong invoice ({"message":"Wrong invoice"})',
    });
    expect(run.steps.map((s) => [s.stepOrder, s.outcome, s.modelCalls])).to.deep.equal([
      [1, 'success', 1],
      [2, 'success', 1],
    ]);
    const [first] = chain.calls();
    expect(first!.response_format).to.deep.include({ type: 'json_schema' });
    expect((first!.response_format as { json_schema: { schema: object } }).json_schema.schema).to.deep.equal(
      obj({ category: { type: 'string', enum: ['billing', 'bug'] } }),
    );
    await recordHistory(env, workflowIds.chainRun(org.organizationId, run.runId, 1), 'chain-run');
  });

  it('shows the model the whole state when showWholeChainState is set', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, instructions: 'first', outputSchema: obj({ a: str }) },
      { stepOrder: 2, instructions: 'second', showWholeChainState: true, outputSchema: obj({ b: str }) },
    ]);
    chain.answer({ content: '{"a":"from one","b":"x"}' });
    await runToEnd(env, org, chain.chainId, { q: 'question' });
    const [first, second] = chain.calls().map(userText);
    expect(first).to.equal('first');
    expect(second).to.match(/^second\n\nThe chain's state so far:\n/);
    expect(JSON.parse(second!.split('so far:\n')[1]!)).to.deep.equal({
      input: { q: 'question' },
      a: 'from one',
    });
  });

  it('refuses a payload that does not fit the first step’s input schema', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, inputSchema: obj({ message: str }), outputSchema: obj({ a: str }) },
    ]);
    const res = await as(env, org.chat.token)
      .post(org.path(`/chains/${chain.chainId}/run`), { payload: { message: 5 } })
      .expect(400);
    expect(res.body.error.message).to.contain('payload/message must be string');
    const runs = await as(env, org.chat.token)
      .get(org.path(`/chains/${chain.chainId}/runs`))
      .expect(200);
    expect(runs.body.totalRows).to.equal(0);
  });

  it('skips a step whose runIf does not hold and fails on failBeforeRunningIf, naming the step', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'maybe', runIf: 'input.n > 10', outputSchema: obj({ a: str }) },
      { stepOrder: 2, name: 'check', failBeforeRunningIf: 'input.n == 3', outputSchema: obj({ b: str }) },
      { stepOrder: 3, name: 'never', outputSchema: obj({ c: str }) },
    ]);
    chain.answer({ content: JSON.stringify({ b: 'x', c: 'y' }) });
    const run = await runToEnd(env, org, chain.chainId, { n: 3 });
    expect(run.status).to.equal('failed');
    expect(run.statusMessage).to.equal('step 2 (check) failed: failBeforeRunningIf held: input.n == 3');
    expect(run.steps.map((s) => [s.stepOrder, s.outcome])).to.deep.equal([
      [1, 'skipped'],
      [2, 'failed'],
    ]);
    expect(chain.calls()).to.have.length(0);
    const ok = await runToEnd(env, org, chain.chainId, { n: 4 });
    expect(ok.status).to.equal('success');
    expect(ok.state).to.deep.equal({ input: { n: 4 }, b: 'x', c: 'y' });
  });

  it('fails on failAfterRunningIf without keeping the step’s output', async () => {
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        name: 'score',
        failAfterRunningIf: 'score < 5',
        outputSchema: obj({ score: { type: 'number' } }),
      },
    ]);
    chain.answer({ content: JSON.stringify({ score: 2 }) });
    const run = await runToEnd(env, org, chain.chainId);
    expect(run.status).to.equal('failed');
    expect(run.statusMessage).to.equal('step 1 (score) failed: failAfterRunningIf held: score < 5');
    expect(run.state).to.deep.equal({ input: {} });
  });

  it('fails on failAfterRunningIf of a step that is not the last, before the next step is asked', async () => {
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        name: 'score',
        instructions: 'Score the draft',
        failAfterRunningIf: 'score < 5',
        outputSchema: obj({ score: { type: 'number' } }),
      },
      { stepOrder: 2, name: 'publish', instructions: 'Publish the draft', outputSchema: obj({ post: str }) },
    ]);
    chain.answer((body) =>
      userText(body).startsWith('Publish')
        ? { content: JSON.stringify({ post: 'published' }) }
        : { content: JSON.stringify({ score: 2 }) },
    );
    const run = await runToEnd(env, org, chain.chainId);
    expect(run.status).to.equal('failed');
    expect(run.statusMessage).to.equal('step 1 (score) failed: failAfterRunningIf held: score < 5');
    // The step asked the model once before its answer was refused: the run view counts that call.
    expect(run.steps.map((s) => [s.stepOrder, s.outcome, s.modelCalls])).to.deep.equal([[1, 'failed', 1]]);
    expect(run.state).to.deep.equal({ input: {} });
    expect(chain.calls()).to.have.length(1);
  });

  it('sends an answer that does not fit back with the problems, and fails after three', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'extract', outputSchema: obj({ total: { type: 'number' } }) },
    ]);
    const off = chain.answer((body: ChatRequest) =>
      body.messages.length < 4 ? { content: '{"total": "ten"}' } : { content: '{"total": 10}' },
    );
    const ok = await runToEnd(env, org, chain.chainId);
    expect(ok.status).to.equal('success');
    expect(ok.state.total).to.equal(10);
    const retry = chain.calls()[1]!;
    expect(userText(retry)).to.contain('/total must be number');
    off();

    const offBad = chain.answer({ content: 'not json at all' });
    const billed = async () =>
      (await env.deps.services.credits.summary(org.organizationId, 100)).recentUsage.filter(
        (u) => u.purpose === 'chain-step',
      ).length;
    const billedBefore = await billed();
    const bad = await runToEnd(env, org, chain.chainId);
    expect(bad.status).to.equal('failed');
    expect(bad.statusMessage).to.equal(
      'step 1 (extract) failed: the answer did not fit the output schema after 3 attempts: the answer is not JSON',
    );
    // The three calls were made, so they are paid for, though the step failed, and the run view counts them.
    expect((await billed()) - billedBefore).to.equal(3);
    expect(bad.steps.map((s) => [s.stepOrder, s.outcome, s.modelCalls])).to.deep.equal([[1, 'failed', 3]]);

    offBad();
    // An answer cut at the model's token limit says so (a 270M local model rambles into its cap).
    chain.answer({ content: '{"total": 1, "note": "and then', cut: true });
    const cut = await runToEnd(env, org, chain.chainId);
    expect(cut.statusMessage).to.equal(
      'step 1 (extract) failed: the answer did not fit the output schema after 3 attempts: the answer is not ' +
        'JSON: the model stopped at its token limit (5 tokens) before the JSON closed',
    );
  });

  it('fans a step out over an array, in order, across several child workflows', async () => {
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        name: 'shout',
        forEachElement: '$.input.words',
        instructions: 'Shout {{element}} (#{{elementIndex}}) for {{input.who}}',
        outputSchema: obj({ loud: str, at: { type: 'integer' } }),
      },
      { stepOrder: 2, name: 'join', instructions: '{{#each loud}}{{this}} {{/each}}' },
    ]);
    chain.answer((body) => {
      const text = userText(body);
      const m = /^Shout (\w+) \(#(\d+)\)/.exec(text);
      if (!m) return { content: text.trim() };
      // later elements answer sooner: order comes from the element index, not from completion
      return {
        content: JSON.stringify({ loud: m[1]!.toUpperCase(), at: Number(m[2]) }),
        delayMs: 200 - Number(m[2]) * 30,
      };
    });
    const words = ['a', 'b', 'c', 'd', 'e'];
    const run = await runToEnd(env, org, chain.chainId, { words, who: 'me' });
    expect(run.status, run.statusMessage ?? '').to.equal('success');
    expect(run.state.loud).to.deep.equal(['A', 'B', 'C', 'D', 'E']);
    expect(run.state.at).to.deep.equal([0, 1, 2, 3, 4]);
    expect(run.state.step2).to.equal('A B C D E');
    expect(run.steps[0]!.modelCalls).to.equal(5);
    // five elements in slices of two: three child workflows
    const parent = workflowIds.chainRun(org.organizationId, run.runId, 1);
    const stepId = await stepIdOf(chain.chainId, 1);
    for (const from of [0, 2, 4]) {
      const child = env.deps.temporal.client.workflow.getHandle(
        workflowIds.chainFanOut(parent, stepId, from),
      );
      expect((await child.describe()).status.name).to.equal('COMPLETED');
    }
    await recordHistory(env, parent, 'chain-run-fan-out');
    await recordHistory(env, parent, 'chain-run-planned-fan-out');
    await recordHistory(env, workflowIds.chainFanOut(parent, stepId, 0), 'chain-fan-out');
    // element records are cleaned up once collected
    const elements = await env.deps.repos
      .tenant(org.organizationId)
      .chainRuns.elementOutputs(run.runId, stepId);
    expect(elements).to.have.length(0);
  });

  async function stepIdOf(chainId: string, stepOrder: number) {
    const steps = await env.deps.repos.tenant(org.organizationId).chains.listSteps(chainId);
    return steps.find((s) => s.stepOrder === stepOrder)!._id;
  }

  it("counts and bills every model call of a fan-out step that an element failed, the elements' that succeeded too", async () => {
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        name: 'each',
        forEachElement: '$.input.items',
        instructions: 'Item {{element}}',
        outputSchema: obj({ x: str }),
      },
    ]);
    // Element 0 answers at once; element 1 never answers JSON, three times over.
    chain.answer((body) =>
      userText(body).includes('Item good') ? { content: '{"x":"ok"}' } : { content: 'not json' },
    );
    const billed = async () =>
      (await env.deps.services.credits.summary(org.organizationId, 100)).recentUsage.filter(
        (u) => u.purpose === 'chain-step',
      ).length;
    const billedBefore = await billed();
    const run = await runToEnd(env, org, chain.chainId, { items: ['good', 'bad'] });
    expect(run.statusMessage).to.equal(
      'step 1 (each) failed: element 1: the answer did not fit the output schema after 3 attempts: the answer is not JSON',
    );
    expect(chain.calls()).to.have.length(4);
    expect(run.steps.map((s) => [s.stepOrder, s.outcome, s.modelCalls])).to.deep.equal([[1, 'failed', 4]]);
    expect((await billed()) - billedBefore).to.equal(4);
  });

  it('runs a fan-out over an empty array without the model, and fails one over a non-array', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'each', forEachElement: '$.input.items', outputSchema: obj({ x: str }) },
    ]);
    chain.answer({ content: '{"x":"1"}' });
    const empty = await runToEnd(env, org, chain.chainId, { items: [] });
    expect(empty.status).to.equal('success');
    expect(empty.state.x).to.deep.equal([]);
    expect(chain.calls()).to.have.length(0);
    const scalar = await runToEnd(env, org, chain.chainId, { items: 'abc' });
    expect(scalar.status).to.equal('failed');
    expect(scalar.statusMessage).to.equal(
      'step 1 (each) failed: forEachElement $.input.items selects string, not an array',
    );
    const missing = await runToEnd(env, org, chain.chainId, {});
    expect(missing.statusMessage).to.contain('selects nothing');
  });
});
