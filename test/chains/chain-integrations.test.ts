import { expect } from 'chai';
import { workflowIds } from '@contracts';
import { recordHistory } from '@test/helpers/histories';
import { createTestAgent } from '@test/helpers/agents';
import { createRunnableChain, finished, systemText, userText } from '@test/helpers/chains';
import { createKb, settled, uploadFile } from '@test/helpers/kb';
import type { ChatRequest } from '@test/helpers/llm';
import { as } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { eventually } from '@test/helpers/wait';
import { useWorkerAndOrg } from '@test/helpers/worker';

const FILE_INPUT = {
  type: 'object',
  properties: {
    fileId: { type: 'string' },
    knowledgeBaseId: { type: 'string' },
    fileName: { type: 'string' },
  },
  required: ['fileId', 'knowledgeBaseId', 'fileName'],
};
const toolResults = (body: ChatRequest) =>
  body.messages.filter((m) => m.role === 'tool').map((m) => m.content as string);

describe('action chains with agents, tools, knowledge bases and ETL rules', function () {
  this.timeout(120_000);
  const suite = useWorkerAndOrg('Chain Integrations Org');

  async function runs(chainId: string) {
    const { env, org } = suite;
    const res = await as(env, org.admin.token)
      .get(org.path(`/chains/${chainId}/runs`))
      .expect(200);
    return res.body.items as Array<{
      runId: string;
      status: string;
      triggerType: string;
      state: Record<string, unknown>;
    }>;
  }

  it('lets an agent run an attached chain as a tool and read its result', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        name: 'total',
        instructions: 'Add up {{json input.amounts}}',
        inputSchema: {
          type: 'object',
          properties: { amounts: { type: 'array', items: { type: 'number' } } },
        },
        outputSchema: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] },
      },
    ]);
    chain.answer({ content: '{"total": 42}' });
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${agentId}/chains`), { actionChainId: chain.chainId })
      .expect(201);
    const tool = `run_chain_${chain.chainId}`;
    env.llm.on({ model }, (body) => {
      const results = toolResults(body);
      if (!results.length) return { toolCalls: [{ name: tool, arguments: { amounts: [40, 2] } }] };
      const out = JSON.parse(results[0]!) as { status: string; state: { total: number } };
      return { content: `The chain said ${out.status}: ${out.state.total}` };
    });
    const started = await as(env, org.owner.token)
      .post(org.path('/conversations'), { agentId, message: 'What is the total?' })
      .expect(201);
    const reply = await eventually(async () => {
      const conv = await as(env, org.owner.token).get(
        org.path(`/conversations/${started.body.conversationId}`),
      );
      const messages = conv.body.messages as
        Array<{ role: string; content: Array<{ text: string }> }> | undefined;
      return messages?.find((m) => m.role === 'assistant');
    }, 60_000);
    expect(reply.content[0]!.text).to.equal('The chain said success: 42');
    const first = env.llm.chatRequests.find((r) => r.model === model)!;
    const offered = first.tools!.find(
      (t) => (t as { function: { name: string } }).function.name === tool,
    ) as {
      function: { parameters: object };
    };
    expect(offered.function.parameters).to.deep.equal({
      type: 'object',
      properties: { amounts: { type: 'array', items: { type: 'number' } } },
    });
    await recordHistory(
      env,
      workflowIds.turn(org.organizationId, started.body.conversationId, started.body.requestId),
      'turn-chain-tool',
    );
    const [run] = await runs(chain.chainId);
    expect(run).to.deep.include({ status: 'success', triggerType: 'agent' });
    expect(run!.state.input).to.deep.equal({ amounts: [40, 2] });
    expect(userText(chain.calls()[0]!)).to.equal('Add up [40,2]');
  });

  it('gives a step its attached tools, knowledge bases and agents', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org, { title: 'Policies' });
    const file = await uploadFile(
      env,
      org,
      kb,
      'refunds.txt',
      'Refunds are paid within 14 days of a return.',
    );
    await settled(env, org, kb, file.fileId);
    const { agentId, model } = await createTestAgent(env, org.organizationId, { name: 'Expert' });
    env.llm.on({ model }, { content: 'The expert says yes.' });
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        name: 'research',
        instructions: 'How fast are refunds?',
        toolChoice: 'required',
        outputSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
      },
    ]);
    const step = `/chains/${chain.chainId}/steps/${chain.stepIds[0]}`;
    const admin = as(env, org.admin.token);
    await admin.post(org.path(`${step}/knowledge-bases`), { knowledgeBaseId: kb }).expect(201);
    await admin.post(org.path(`${step}/agents`), { agentId }).expect(201);
    await admin
      .post(org.path(`${step}/tools`), { toolCode: 'current_time', config: { timeZone: 'Europe/Paris' } })
      .expect(201);
    chain.answer((body) => {
      const results = toolResults(body);
      if (!results.length)
        return {
          toolCalls: [
            { name: 'search_knowledge_bases', arguments: { query: 'refund delay' } },
            { name: `ask_${agentId}`, arguments: { message: 'Is that right?' } },
            { name: 'current_time', arguments: {} },
          ],
        };
      return { content: JSON.stringify({ answer: results.join(' | ') }) };
    });
    const { runId } = (
      await as(env, org.chat.token)
        .post(org.path(`/chains/${chain.chainId}/run`), {})
        .expect(202)
    ).body as { runId: string };
    const run = await finished(env, org, chain.chainId, runId);
    expect(run.status, run.statusMessage ?? '').to.equal('success');
    const answer = run.state.answer as string;
    expect(answer).to.contain('Refunds are paid within 14 days').and.contain('[refunds.txt]');
    expect(answer).to.contain('The expert says yes.');
    expect(answer).to.contain('"timeZone":"Europe/Paris"');
    const first = chain.calls()[0]!;
    expect(first.tool_choice).to.equal('required');
    expect(first.tools!.map((t) => (t as { function: { name: string } }).function.name)).to.have.members([
      'current_time',
      'search_knowledge_bases',
      `ask_${agentId}`,
    ]);
    expect(systemText(first)).to.contain(chain.marker);
  });

  it('runs a workflow ETL rule’s chain once for each READY file, with the file as input', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(
      env,
      org,
      [
        {
          stepOrder: 1,
          name: 'label',
          instructions: 'Label {{input.fileName}}',
          inputSchema: FILE_INPUT,
          outputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
        },
      ],
      { inputType: 'file' },
    );
    chain.answer((body) => ({ content: JSON.stringify({ label: userText(body).toUpperCase() }) }));
    const kb = await createKb(env, org);
    const rules = org.path(`/knowledgebases/${kb}/etls`);
    const refused = await as(env, org.admin.token)
      .post(rules, { etlType: 'workflow', workflowId: 'chn_missing', conditions: [] })
      .expect(invalidReference('workflowId'));
    expect(refused.body.error.message).to.contain('chn_missing');
    const json = await createRunnableChain(env, org, [{ stepOrder: 1 }]);
    await as(env, org.admin.token)
      .post(rules, { etlType: 'workflow', workflowId: json.chainId, conditions: [] })
      .expect(400);
    await as(env, org.admin.token)
      .post(rules, {
        etlType: 'workflow',
        workflowId: chain.chainId,
        conditions: [{ field: 'extension', comparison: 'EQUALS', value: 'txt' }],
      })
      .expect(201);
    const file = await uploadFile(env, org, kb, 'invoice.txt', 'Invoice 7 for 120 EUR.');
    const other = await uploadFile(env, org, kb, 'notes.md', '# Notes');
    await settled(env, org, kb, file.fileId);
    await settled(env, org, kb, other.fileId);
    const [run] = await eventually(async () => {
      const items = await runs(chain.chainId);
      return items.length && items.every((r) => r.status === 'success') ? items : undefined;
    }, 60_000);
    expect(await runs(chain.chainId)).to.have.length(1);
    expect(run).to.deep.include({ triggerType: 'etl' });
    expect(run!.state).to.deep.equal({
      input: { fileId: file.fileId, knowledgeBaseId: kb, fileName: 'invoice.txt' },
      label: 'LABEL INVOICE.TXT',
    });
  });
});
