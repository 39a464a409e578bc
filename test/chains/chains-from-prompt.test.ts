import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { createServices } from '@lib/services';
import { testEnv, type TestEnv } from '@test/helpers/env';
import type { ChatRequest, ScriptedReply } from '@test/helpers/llm';
import { countTokens } from '@test/helpers/llm-sse';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { ROOT } from '@test/helpers/paths';

const run = promisify(execFile);

const inputSchema = {
  type: 'object',
  properties: { ticketText: { type: 'string', description: 'The ticket' } },
  required: ['ticketText'],
};
const outputSchema = {
  type: 'object',
  properties: { summary: { type: 'string' }, urgency: { type: 'integer', minimum: 1, maximum: 5 } },
  required: ['summary', 'urgency'],
};
const laterStep = {
  name: 'Summarise ticket',
  description: 'Summarises the ticket and rates its urgency.',
  instructions: 'Summarise {{input.ticketText}} and rate its urgency from 1 to 5.',
  reasoning: 'low',
  outputSchema,
};
const firstStep = { ...laterStep, inputSchema };
/** The structured-output format a request asked for. */
const formatOf = (req: ChatRequest) =>
  req.response_format as unknown as {
    type: string;
    json_schema: { name: string; strict: boolean; schema: { required: string[]; properties: object } };
  };
const answer = (step: object) => ({ content: JSON.stringify(step) });

describe('POST /orgs/{organizationId}/chains/from-prompt', () => {
  let env: TestEnv;
  let org: TestOrg;
  let start: number;
  before(async () => {
    env = await testEnv();
    start = env.config.credits.startingBalance;
  });
  beforeEach(async () => {
    org = await createTestOrg(env, 'Chain Builders');
  });

  // Each test's prompt carries its own tag; the scripted model answers (and the test reads) only its requests.
  // Replies a test scripted and did not use are dropped after it.
  let tag: string;
  let unscript: Array<() => void> = [];
  beforeEach(() => {
    tag = `ticket-${randomBytes(4).toString('hex')}`;
  });
  afterEach(() => {
    for (const off of unscript) off();
    unscript = [];
  });
  const mentions = (t: string) => (body: ChatRequest) => JSON.stringify(body.messages).includes(t);
  const script = (...replies: ScriptedReply[]) => {
    for (const reply of replies) unscript.push(env.llm.on(mentions(tag), reply, 1));
  };
  const requests = () => env.llm.chatRequests.filter(mentions(tag));
  const generate = (body: object, token = org.admin.token) =>
    as(env, token).post(org.path('/chains/from-prompt'), body);
  const prompt = () => `Summarise the support ticket ${tag} and rate its urgency`;
  /** What the scripted server reports for a request and its reply (it counts words). */
  const tokensOf = (req: ChatRequest, content: string) => ({
    promptTokens: countTokens(req.messages.map((m) => JSON.stringify(m.content ?? '')).join(' ')),
    completionTokens: countTokens(content),
  });
  const costOf = (t: { promptTokens: number; completionTokens: number }) => {
    const { perThousandPromptTokens: p, perThousandCompletionTokens: c } = env.config.credits;
    return Math.ceil((t.promptTokens * p + t.completionTokens * c) / 1000);
  };
  const usageRecords = () => env.deps.repos.tenant(org.organizationId).llmUsage.recent(100);

  it('writes a first step with the chain input schema, in structured output, and bills the call', async () => {
    script(answer(firstStep));
    const workflowInput = { ticketText: 'Charged twice', customerEmail: 'jo@example.com' };
    const res = await generate({ prompt: prompt(), isFirstStep: true, workflowInput }).expect(200);
    expect(res.body.step).to.deep.equal(firstStep);

    const [req, ...more] = requests();
    expect(more).to.have.length(0);
    expect(req!.model).to.equal(env.config.chainGeneration.model);
    const format = req!.response_format as {
      type: string;
      json_schema: { name: string; strict: boolean; schema: { required: string[] } };
    };
    expect(format.type).to.equal('json_schema');
    expect(format.json_schema.strict).to.equal(false);
    expect(format.json_schema.schema.required).to.have.members([
      'name',
      'description',
      'instructions',
      'reasoning',
      'outputSchema',
      'inputSchema',
    ]);
    const userText = JSON.stringify(req!.messages.filter((m) => m.role === 'user'));
    expect(userText).to.contain(tag).and.contain('first step').and.contain('customerEmail');

    const tokens = tokensOf(req!, JSON.stringify(firstStep));
    const cost = costOf(tokens);
    expect(res.body.usage).to.deep.equal({ modelCalls: 1, ...tokens, cost, balance: start - cost });
    const [record, ...others] = await usageRecords();
    expect(others).to.have.length(0);
    expect(record).to.include({
      purpose: 'chain-from-prompt',
      model: env.config.chainGeneration.model,
      ...tokens,
      cost,
      balanceAfter: start - cost,
      userId: org.admin.userId,
    });
    expect(await env.deps.services.credits.balance(org.organizationId)).to.equal(start - cost);
  });

  it('writes a later step without an input schema, with the chain so far and the agent response as context', async () => {
    // A model that adds an inputSchema anyway: the later step does not get one.
    script(answer(firstStep));
    const existingWorkflow = { name: 'Support triage', steps: [{ stepOrder: 1, name: 'Fetch the ticket' }] };
    const res = await generate(
      { prompt: prompt(), existingWorkflow, agentResponse: 'The customer sounds furious.' },
      org.owner.token,
    ).expect(200);
    expect(res.body.step).to.deep.equal(laterStep);
    const [req] = requests();
    const schema = formatOf(req!).json_schema.schema;
    expect(schema.required).not.to.include('inputSchema');
    expect(schema.properties).not.to.have.property('inputSchema');
    const userText = JSON.stringify(req!.messages.filter((m) => m.role === 'user'));
    expect(userText).to.contain('Fetch the ticket').and.contain('The customer sounds furious.');
    expect(userText).not.to.contain('first step');
  });

  it('asks once more with the problems of an invalid answer, and bills both calls', async () => {
    const invalid = JSON.stringify({
      ...firstStep,
      outputSchema: { type: 'array', items: { type: 'string' } },
    });
    script({ content: invalid }, answer(firstStep));
    const res = await generate({ prompt: prompt(), isFirstStep: true }, org.apiKey).expect(200);
    expect(res.body.step).to.deep.equal(firstStep);

    const [first, second, ...more] = requests();
    expect(more).to.have.length(0);
    // The second request is the first conversation, the invalid answer, and its problems.
    expect(second!.messages.slice(0, first!.messages.length)).to.deep.equal(first!.messages);
    const [assistant, retry] = second!.messages.slice(first!.messages.length);
    expect(assistant).to.deep.equal({ role: 'assistant', content: invalid });
    expect(retry!.role).to.equal('user');
    expect(retry!.content)
      .to.contain('outputSchema must have "type": "object"')
      .and.contain('outputSchema must have "properties"');
    expect(second!.response_format).to.deep.equal(first!.response_format);

    const calls = [tokensOf(first!, invalid), tokensOf(second!, JSON.stringify(firstStep))];
    const cost = costOf(calls[0]!) + costOf(calls[1]!);
    expect(res.body.usage).to.include({ modelCalls: 2, cost, balance: start - cost });
    const records = await usageRecords();
    expect(records.map((r) => r.cost)).to.have.members(calls.map(costOf));
  });

  it('answers 502 model_invalid_answer after a second invalid answer, naming its problems', async () => {
    const uncompilable = {
      ...firstStep,
      inputSchema: { type: 'object', properties: { a: { type: 'strin' } } },
    };
    script({ content: 'Sure! Here is your step: {' }, answer(uncompilable));
    const res = await generate({ prompt: prompt(), isFirstStep: true }).expect(502);
    expect(res.body.error.code).to.equal('model_invalid_answer');
    expect(res.body.error.message).to.contain('inputSchema is not a valid JSON Schema');
    expect(res.body.error.details.problems).to.have.length(1);
    expect(requests()[1]!.messages.at(-1)!.content).to.contain('the answer is not JSON');
    // Both calls were made, so both are billed; the error says what they cost.
    const records = await usageRecords();
    expect(records).to.have.length(2);
    const cost = records.reduce((n, r) => n + r.cost, 0);
    expect(res.body.error.details.usage).to.include({ modelCalls: 2, cost, balance: start - cost });
  });

  it('answers 502 model_error when the model server fails, without its words, and bills nothing', async () => {
    script({ error: { status: 500, message: 'upstream exploded: account acct_123 over quota' } });
    const res = await generate({ prompt: prompt() }).expect(502);
    expect(res.body.error.code).to.equal('model_error');
    expect(res.body.error.message).to.contain('HTTP 500').and.not.contain('acct_123');
    expect(requests()).to.have.length(1);
    expect(await usageRecords()).to.have.length(0);
    expect(await env.deps.services.credits.balance(org.organizationId)).to.equal(start);
  });

  it('answers 502 model_error when the model does not answer in time', async () => {
    // A service of its own with a 300 ms limit; the scripted model answers only after 10 s (the test does not wait).
    const services = createServices({
      ...env.deps,
      config: { ...env.config, chainGeneration: { ...env.config.chainGeneration, timeoutMs: 300 } },
    });
    script({ ...answer(laterStep), delayMs: 10_000 });
    const ctx = await env.deps.authenticator.authenticate(`Bearer ${org.admin.token}`, org.organizationId);
    const err = await services.stepFromPrompt.generate(ctx, { prompt: prompt() }).then(
      () => expect.fail('generated a step'),
      (e: unknown) => e as { status: number; code: string; message: string },
    );
    expect(err).to.include({ status: 502, code: 'model_error' });
    expect(err.message).to.contain('did not answer within');
    expect(await usageRecords()).to.have.length(0);
  });

  it('refuses with 402 once the credits are used up, before calling the model; a grant lets it work again', async function () {
    this.timeout(120_000);
    // One credit left: the next call starts, is charged in full, and leaves the balance at or below zero.
    await env.deps.services.credits.grant(org.organizationId, 1 - start, 'test: one credit left');
    script(answer(laterStep));
    const last = await generate({ prompt: prompt() }).expect(200);
    expect(last.body.usage.cost).to.be.greaterThan(1);
    expect(last.body.usage.balance).to.equal(1 - last.body.usage.cost);

    const refused = await generate({ prompt: prompt() }).expect(402);
    expect(refused.body.error).to.deep.equal({
      code: 'insufficient_credits',
      message: `organization ${org.organizationId} is out of credits (balance ${last.body.usage.balance}); ask an operator to grant more`,
      details: { balance: last.body.usage.balance },
    });
    expect(requests()).to.have.length(1);

    await run(
      'npm',
      ['run', '--silent', 'cli', '--', 'credits', 'grant', '--org', org.organizationId, '--amount', '500'],
      {
        cwd: ROOT,
        env: { ...process.env, JWT_SECRET: env.config.auth.jwtSecret, MONGODB_URI: env.config.mongodbUri },
      },
    );
    script(answer(laterStep));
    const again = await generate({ prompt: prompt() }).expect(200);
    expect(again.body.usage.balance).to.equal(last.body.usage.balance + 500 - again.body.usage.cost);
  });

  it('bills concurrent requests without losing a debit', async () => {
    const n = 6;
    for (let i = 0; i < n; i++) script(answer(laterStep));
    const results = await Promise.all(
      Array.from({ length: n }, () => generate({ prompt: prompt() }).expect(200)),
    );
    const cost = results.reduce((sum, r) => sum + (r.body.usage.cost as number), 0);
    expect(await env.deps.services.credits.balance(org.organizationId)).to.equal(start - cost);
    expect(await usageRecords()).to.have.length(n);
    expect(new Set(results.map((r) => r.body.usage.balance as number)).size).to.equal(n);
  });

  it('is for admins and owners: the chat role gets 403, and nothing is called or billed', async () => {
    const res = await generate({ prompt: prompt() }, org.chat.token).expect(403);
    expect(res.body.error.code).to.equal('forbidden');
    expect(res.body.error.message).to.contain('chains.manage');
    expect(requests()).to.have.length(0);
    expect(await usageRecords()).to.have.length(0);
  });

  it("refuses another organization's credentials with 401", async () => {
    const other = await createTestOrg(env, 'Other Org');
    for (const token of [other.owner.token, other.admin.token, other.apiKey])
      await generate({ prompt: prompt() }, token).expect(401);
    expect(requests()).to.have.length(0);
  });

  it('refuses bad bodies with 400, calling and billing nothing', async () => {
    const bad: Array<[object, string]> = [
      [{}, "must have required property 'prompt'"],
      [{ prompt: '   ' }, 'prompt must not be blank'],
      [{ prompt: 'x'.repeat(20_001) }, 'prompt must NOT have more than 20000 characters'],
      [{ prompt: prompt(), isFirstStep: 'yes' }, 'isFirstStep must be boolean'],
      [{ prompt: prompt(), workflowInput: ['a'] }, 'workflowInput must be object'],
      [{ prompt: prompt(), existingWorkflow: 'chain' }, 'existingWorkflow must be object'],
      [{ prompt: prompt(), agentResponse: 42 }, 'agentResponse must be string'],
      [{ prompt: prompt(), temperature: 1 }, 'must NOT have additional properties'],
      [
        { prompt: prompt(), workflowInput: { text: 'x'.repeat(50_001) } },
        'workflowInput must be at most 50000 characters as JSON',
      ],
    ];
    for (const [body, message] of bad) {
      const res = await generate(body).expect(400);
      expect(res.body.error.code, JSON.stringify(body).slice(0, 80)).to.equal('validation_failed');
      expect(res.body.error.message).to.contain(message);
    }
    expect(requests()).to.have.length(0);
    expect(await usageRecords()).to.have.length(0);
  });
});
