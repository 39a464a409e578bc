import { workflowIds } from '@contracts';
import { recordHistory } from '@test/helpers/histories';
import { expect } from 'chai';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { as } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { createKb, settled, uploadFile } from '@test/helpers/kb';
import { eventually } from '@test/helpers/wait';
import type { ChatRequest } from '@test/helpers/llm';

const LEASE = 'The tenant pays rent on the first day of each month, by bank transfer to the owner.';

const toolMessages = (body: ChatRequest) => body.messages.filter((m) => m.role === 'tool');

describe('knowledge bases: agents search them, ETL rules run agents', function () {
  this.timeout(120_000);
  const suite = useWorkerAndOrg('KB Agents Org');

  async function agentWithModel(model: string) {
    const { env, org } = suite;
    const res = await as(env, org.admin.token)
      .post(org.path('/agents'), {
        name: 'Helper',
        description: 'd',
        instructions: 'Answer from the documents.',
        model,
      })
      .expect(201);
    return res.body.id as string;
  }

  it('gives an agent with an attached knowledge base a search tool whose hits its reply cites', async () => {
    const { env, org } = suite;
    const model = `kb-tool-${org.organizationId}`;
    const kb = await createKb(env, org, { title: 'Leases' });
    const file = await uploadFile(env, org, kb, 'lease.txt', LEASE);
    await settled(env, org, kb, file.fileId);
    const agent = await agentWithModel(model);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${agent}/knowledgebases`), { knowledgeBaseId: kb })
      .expect(201);
    const listed = await as(env, org.chat.token).get(org.path(`/agents/${agent}/knowledgebases`));
    // chat members without group access read no agent: the list needs read access to the agent
    expect([200, 404]).to.include(listed.status);

    env.llm.on({ model }, (body) => {
      const results = toolMessages(body);
      if (!results.length)
        return { toolCalls: [{ name: 'search_knowledge_bases', arguments: { query: 'when is rent due' } }] };
      const hits = JSON.parse(results[0]!.content as string) as Array<{ citation: string; text: string }>;
      return { content: `Rent is due on the first ${hits[0]!.citation}` };
    });
    const started = await as(env, org.owner.token)
      .post(org.path('/conversations'), { agentId: agent, message: 'When do I pay rent?' })
      .expect(201);
    const reply = await eventually(async () => {
      const conv = await as(env, org.owner.token).get(
        org.path(`/conversations/${started.body.conversationId}`),
      );
      const messages = conv.body.messages as
        Array<{ role: string; content: Array<{ text: string }> }> | undefined;
      return messages?.find((m) => m.role === 'assistant');
    }, 60_000);
    expect(reply.content[0]!.text).to.equal('Rent is due on the first [lease.txt]');
    const second = env.llm.chatRequests.filter((r) => r.model === model)[1]!;
    const tool = second.tools?.map((t) => (t as { function: { name: string } }).function.name);
    expect(tool).to.include('search_knowledge_bases');
    expect(toolMessages(second)[0]!.content).to.contain(LEASE);
  });

  it('validates ETL rules and keeps them per knowledge base', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const post = (body: object) =>
      as(env, org.admin.token).post(org.path(`/knowledgebases/${kb}/etls`), body);
    const refused = async (body: object, text: string) =>
      expect((await post(body).expect(400)).body.error.message).to.contain(text);
    // openapi.yaml holds these rules (the deprecated action-chain type is no longer a type)
    await refused(
      { etlType: 'action-chain', agentId: 'default-assistant', prompt: 'Summarise', conditions: [] },
      'etlType must be equal to one of the allowed values',
    );
    await refused({ etlType: 'agent', agentId: 'default-assistant', conditions: [] }, 'prompt');
    await refused({ etlType: 'workflow', conditions: [] }, 'workflowId');
    await refused(
      {
        etlType: 'workflow',
        workflowId: 'w',
        conditions: [{ field: 'fileName', comparison: 'IS_EMPTY', value: 'x' }],
      },
      'request/body/conditions/0 must NOT be valid',
    );
    await refused(
      { etlType: 'workflow', workflowId: 'w', conditions: [{ field: 'fileName', comparison: 'CONTAINS' }] },
      "request/body/conditions/0 must have required property 'value'",
    );
    await refused(
      {
        etlType: 'workflow',
        workflowId: 'w',
        conditions: [
          { field: 'fileName', comparison: 'CONTAINS', value: 'a' },
          { field: 'fileName', comparison: 'CONTAINS', value: 'b' },
        ],
      },
      'mergeOperator',
    );
    await post({
      etlType: 'workflow',
      workflowId: 'w',
      conditions: [{ field: 'color', comparison: 'EQUALS', value: 'x' }],
    }).expect(400);
    await as(env, org.chat.token)
      .post(org.path(`/knowledgebases/${kb}/etls`), { etlType: 'workflow', workflowId: 'w', conditions: [] })
      .expect(403);

    // A workflow is a file action chain of the organization.
    const chain = await as(env, org.admin.token)
      .post(org.path('/chains'), {
        name: 'Label files',
        description: 'd',
        llmInstructions: 'i',
        inputType: 'file',
      })
      .expect(201);
    const chainId = chain.body.actionChainId as string;
    const created = await post({
      etlType: 'workflow',
      workflowId: chainId,
      conditions: [{ field: 'extension', comparison: 'EQUALS', value: 'pdf' }],
    }).expect(201);
    const path = org.path(`/knowledgebases/${kb}/etls/${created.body.etlId}`);
    expect((await as(env, org.chat.token).get(path).expect(200)).body).to.include({
      etlType: 'workflow',
      workflowId: chainId,
    });
    // An admin outside the agent's groups may not give it work.
    await as(env, org.admin.token)
      .put(path, { etlType: 'agent', agentId: 'default-assistant', prompt: 'Summarise', conditions: [] })
      .expect(invalidReference('agentId'));
    const replaced = await as(env, org.owner.token)
      .put(path, { etlType: 'agent', agentId: 'default-assistant', prompt: 'Summarise', conditions: [] })
      .expect(200);
    expect(replaced.body).to.include({ etlType: 'agent', agentId: 'default-assistant', workflowId: null });
    expect(
      (
        await as(env, org.admin.token)
          .get(org.path(`/knowledgebases/${kb}/etls`))
          .expect(200)
      ).body,
    ).to.have.length(1);
    await as(env, org.admin.token).delete(path).expect(200);
    await as(env, org.admin.token).get(path).expect(404);
  });

  it('runs an agent rule once for each READY file that meets its conditions', async () => {
    const { env, org } = suite;
    const model = `kb-etl-${org.organizationId}`;
    const agent = await agentWithModel(model);
    env.llm.on({ model }, { content: 'Summary done.' });
    const kb = await createKb(env, org);
    await as(env, org.owner.token)
      .post(org.path(`/knowledgebases/${kb}/etls`), {
        etlType: 'agent',
        agentId: agent,
        prompt: 'Summarise this lease.',
        conditions: [
          { field: 'fileName', comparison: 'STARTS_WITH', value: 'LEASE', mergeOperator: 'AND' },
          { field: 'extension', comparison: 'EQUALS', value: 'txt' },
        ],
      })
      .expect(201);
    const match = await uploadFile(env, org, kb, 'lease-2024.txt', LEASE);
    const other = await uploadFile(env, org, kb, 'notes.txt', 'Unrelated notes.');
    await settled(env, org, kb, match.fileId);
    await settled(env, org, kb, other.fileId);
    const conversations = await eventually(async () => {
      const res = await as(env, org.owner.token)
        .get(org.path(`/conversations?agentId=${agent}`))
        .expect(200);
      const items = res.body.items as Array<{ title: string }>;
      return items.length ? items : undefined;
    });
    expect(conversations).to.have.length(1);
    await recordHistory(env, workflowIds.ingestFile(org.organizationId, match.fileId, 1), 'kb-ingest-etl');
    expect(conversations[0]!.title).to.equal('lease-2024.txt (ETL)');
    await eventually(() => env.llm.chatRequests.some((r) => r.model === model));
    const asked = env.llm.chatRequests.find((r) => r.model === model)!;
    const text = asked.messages.at(-1)!.content as string;
    expect(text).to.contain('Summarise this lease.').and.contain(match.fileId).and.contain(LEASE);
    // A reindex is a new generation: the rule runs again for it, once.
    await as(env, org.admin.token)
      .put(org.path(`/knowledgebases/${kb}/files/${match.fileId}/reindex`))
      .expect(200);
    await eventually(async () => (await settled(env, org, kb, match.fileId)).generation === 2);
    await eventually(async () => {
      const res = await as(env, org.owner.token)
        .get(org.path(`/conversations?agentId=${agent}`))
        .expect(200);
      return res.body.items.length === 2;
    });
  });
});
