import { expect } from 'chai';
import { workflowIds } from '@contracts';
import type { ChatRequest } from '@test/helpers/llm';
import type { TestEnv } from '@test/helpers/env';
import { recordHistory } from '@test/helpers/histories';
import { createKb, settled, uploadFile } from '@test/helpers/kb';
import { as, type TestOrg } from '@test/helpers/org';
import { stored } from '@test/helpers/store';
import { eventually } from '@test/helpers/wait';
import { useAnalysisSuite, type AnalysisView } from '@test/conversations/analysis-suite';
import { createTable, insertRow } from '@test/helpers/tables-fixtures';

const NOTES = 'The North region opened two new stores in April, which drove most of its growth.';

const toolMessages = (body: ChatRequest) =>
  body.messages.filter((m) => m.role === 'tool') as Array<{ content: string; tool_call_id: string }>;
const toolNames = (body: ChatRequest) =>
  (body.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);

describe('analyses', () => {
  const { suite, analysisPath, conversationWithAgent, create, read, finished } = useAnalysisSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  async function artifactText(artifactId: string, versionId?: string) {
    const link = await as(env, org.owner.token)
      .post(org.path(`/artifacts/${artifactId}/download-link`), versionId ? { versionId } : {})
      .expect(200);
    return (await fetch(link.body.downloadLink as string)).text();
  }

  it('runs the question through the agent with table and knowledge-base tools and stores the answer as text and a Markdown artifact', async () => {
    const { model, conversationId, agentId } = await conversationWithAgent();
    await createTable(env, org, 'sales', [
      { name: 'region', type: 'text', required: true, comments: 'Region' },
      { name: 'growth', type: 'numeric', required: true, comments: 'Growth in percent' },
    ]);
    await insertRow(env, org, 'sales', { region: 'North', growth: 18 });
    await insertRow(env, org, 'sales', { region: 'South', growth: 4 });
    const kb = await createKb(env, org, { title: 'Regional notes' });
    const file = await uploadFile(env, org, kb, 'notes.txt', NOTES);
    expect((await settled(env, org, kb, file.fileId)).status).to.equal('READY');

    env.llm.on({ model }, (body) => {
      const results = toolMessages(body);
      if (results.length === 0) return { toolCalls: [{ id: 'c1', name: 'list_tables', arguments: {} }] };
      if (results.length === 1)
        return {
          toolCalls: [
            { id: 'c2', name: 'query_table', arguments: { tableName: 'sales', orderBy: 'growth:desc' } },
            { id: 'c3', name: 'search_knowledge_bases', arguments: { query: 'North region growth' } },
          ],
        };
      const rows = JSON.parse(results[1]!.content) as { items: Array<{ region: string; growth: number }> };
      const hits = JSON.parse(results[2]!.content) as Array<{ citation: string }>;
      return {
        content: `**${rows.items[0]!.region}** grew fastest (+${rows.items[0]!.growth}%), thanks to new stores ${hits[0]!.citation}.`,
      };
    });

    const created = await create(conversationId, {
      title: '  Which region grew fastest?  ',
      description: 'Use the sales table and explain why.',
    });
    expect(created).to.deep.include({
      conversationId,
      agentId,
      creatorUserId: org.owner.userId,
      title: 'Which region grew fastest?',
      description: 'Use the sales table and explain why.',
      status: 'queued',
      run: 1,
      result: null,
      artifactId: null,
      error: null,
      completedAt: null,
    });

    const done = await finished(conversationId, created.analysisId);
    const answer = '**North** grew fastest (+18%), thanks to new stores [notes.txt].';
    expect(done).to.deep.include({ status: 'completed', result: answer, error: null });
    expect(done.startedAt).to.be.a('string');
    expect(done.completedAt).to.be.a('string');
    expect(await artifactText(done.artifactId!)).to.equal(answer);
    const artifact = await as(env, org.owner.token)
      .get(org.path(`/artifacts/${done.artifactId}`))
      .expect(200);
    expect(artifact.body.artifact).to.deep.include({
      name: 'Analysis: Which region grew fastest?',
      contentType: 'text/markdown',
      scope: 'conversation',
    });

    const requests = env.llm.chatRequests.filter((r) => r.model === model);
    expect(requests).to.have.length(3);
    expect(toolNames(requests[0]!)).to.have.members(['list_tables', 'query_table', 'search_knowledge_bases']);
    expect(requests[0]!.messages[0]!.content).to.contain('You are a careful analyst.');
    expect(requests[0]!.messages[1]!.content).to.equal(
      '# Which region grew fastest?\n\nUse the sales table and explain why.',
    );
    const [tables, rows, passages] = toolMessages(requests[2]!).map((m) => m.content);
    expect(JSON.parse(tables!)).to.deep.equal([
      {
        name: 'sales',
        description: null,
        fields: [
          { name: 'region', type: 'text' },
          { name: 'growth', type: 'numeric' },
        ],
      },
    ]);
    expect(rows).to.contain('"region":"North"');
    expect(passages).to.contain(NOTES);
    const usage = await stored(env, 'llm_usage').countDocuments({
      organizationId: org.organizationId,
      purpose: 'analysis',
    });
    expect(usage).to.equal(3);

    const list = await as(env, org.owner.token).get(analysisPath(conversationId)).expect(200);
    expect(list.body).to.deep.equal({ items: [done], totalRows: 1, offset: 0 });
    await recordHistory(env, workflowIds.analysis(org.organizationId, created.analysisId, 1), 'analysis');
  });

  it('re-runs when the question changes, keeps it when it does not, and deletes (cancelling a running run)', async () => {
    const { model, conversationId } = await conversationWithAgent();
    env.llm.on({ model }, { content: 'First answer.' }, 1);
    const first = await finished(conversationId, (await create(conversationId)).analysisId);
    expect(first).to.deep.include({ status: 'completed', result: 'First answer.', run: 1 });
    const path = analysisPath(conversationId, `/${first.analysisId}`);

    // The same question again: nothing runs.
    const same = await as(env, org.owner.token).put(path, { title: 'Q', description: 'D' }).expect(200);
    expect(same.body).to.deep.include({ status: 'completed', run: 1, result: 'First answer.' });

    env.llm.on({ model }, { content: 'Second answer.' }, 1);
    const changed = await as(env, org.owner.token).put(path, { description: 'D, but by month' }).expect(200);
    expect(changed.body).to.deep.include({
      status: 'queued',
      run: 2,
      description: 'D, but by month',
      result: null,
      completedAt: null,
      artifactId: first.artifactId,
    });
    const second = await finished(conversationId, first.analysisId);
    expect(second).to.deep.include({ status: 'completed', result: 'Second answer.', run: 2 });
    expect(second.artifactId).to.equal(first.artifactId);
    expect(second.artifactVersionId).to.not.equal(first.artifactVersionId);
    expect(await artifactText(second.artifactId!)).to.equal('Second answer.');
    expect(await artifactText(first.artifactId!, first.artifactVersionId!)).to.equal('First answer.');
    const lastRequest = env.llm.chatRequests.filter((r) => r.model === model).at(-1)!;
    expect(lastRequest.messages[1]!.content).to.equal('# Q\n\nD, but by month');

    // rerun: true runs an unchanged question again.
    env.llm.on({ model }, { content: 'Third answer.' }, 1);
    const rerun = await as(env, org.owner.token).put(path, { rerun: true }).expect(200);
    expect(rerun.body).to.deep.include({ status: 'queued', run: 3 });
    expect(await finished(conversationId, first.analysisId)).to.deep.include({ result: 'Third answer.' });

    // A run still waiting for the model is cancelled by DELETE and writes nothing afterwards.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    env.llm.on(
      { model },
      async () => {
        await gate;
        return { content: 'Too late.' };
      },
      1,
    );
    const running = await create(conversationId, { title: 'Slow one' });
    const calls = env.llm.chatRequests.filter((r) => r.model === model).length;
    try {
      await eventually(async () => (await read(conversationId, running.analysisId)).status === 'running');
      await eventually(() => env.llm.chatRequests.filter((r) => r.model === model).length === calls + 1);
      const page = await as(env, org.owner.token)
        .get(`${analysisPath(conversationId)}?limit=1`)
        .expect(200);
      expect(page.body.totalRows).to.equal(2);
      expect(page.body.items.map((a: AnalysisView) => a.analysisId)).to.deep.equal([running.analysisId]);

      const removed = await as(env, org.owner.token)
        .delete(analysisPath(conversationId, `/${running.analysisId}`))
        .expect(200);
      expect(removed.body).to.deep.equal({
        organizationId: org.organizationId,
        conversationId,
        analysisId: running.analysisId,
      });
      const handle = env.deps.temporal.client.workflow.getHandle(
        workflowIds.analysis(org.organizationId, running.analysisId, 1),
      );
      await eventually(async () => (await handle.describe()).status.name === 'CANCELLED');
    } finally {
      release();
    }
    await as(env, org.owner.token)
      .get(analysisPath(conversationId, `/${running.analysisId}`))
      .expect(404);
    expect(await stored(env, 'analyses').countDocuments({ _id: running.analysisId })).to.equal(0);

    // Deleting the conversation deletes its analyses.
    await as(env, org.owner.token)
      .delete(org.path(`/conversations/${conversationId}`))
      .expect(200);
    expect(await stored(env, 'analyses').countDocuments({ conversationId })).to.equal(0);
  });
});
