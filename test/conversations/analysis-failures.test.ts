import { expect } from 'chai';
import { workflowIds } from '@contracts';
import type { TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { stored } from '@test/helpers/store';
import { eventually } from '@test/helpers/wait';
import { useAnalysisSuite } from '@test/conversations/analysis-suite';

describe('analyses', () => {
  const { suite, analysisPath, conversationWithAgent, create, read, finished } = useAnalysisSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  it('records a failed run with the reason, and a run cancelled outside the API as cancelled', async () => {
    const { model, conversationId } = await conversationWithAgent();
    env.llm.on({ model }, { error: { status: 400, message: 'context length exceeded' } }, 1);
    const failed = await finished(conversationId, (await create(conversationId)).analysisId);
    expect(failed.status).to.equal('failed');
    expect(failed.error).to.match(/the model rejected the request \(400\).*context length exceeded/);
    expect(failed).to.deep.include({ result: null, artifactId: null });
    expect(failed.completedAt).to.be.a('string');

    // An empty answer is a failure too, not an empty artifact.
    env.llm.on({ model }, { content: '   ' }, 1);
    const rerun = await as(env, org.owner.token)
      .put(analysisPath(conversationId, `/${failed.analysisId}`), { rerun: true })
      .expect(200);
    expect(rerun.body).to.deep.include({ status: 'queued', error: null, completedAt: null, run: 2 });
    expect(await finished(conversationId, failed.analysisId)).to.deep.include({
      status: 'failed',
      error: 'the agent gave no answer',
    });

    // So is an answer that only repeats the question (title and description are Q and D here).
    for (const echo of ['# Q', '**q**.', '# Q\n\nD']) {
      env.llm.on({ model }, { content: echo }, 1);
      await as(env, org.owner.token)
        .put(analysisPath(conversationId, `/${failed.analysisId}`), { rerun: true })
        .expect(200);
      expect(await finished(conversationId, failed.analysisId), echo).to.deep.include({
        status: 'failed',
        error: 'the agent only repeated the question',
        result: null,
      });
    }
    // An answer that says more than the question is a result.
    env.llm.on({ model }, { content: '# Q\n\nD: yes, by 12%.' }, 1);
    await as(env, org.owner.token)
      .put(analysisPath(conversationId, `/${failed.analysisId}`), { rerun: true })
      .expect(200);
    expect(await finished(conversationId, failed.analysisId)).to.deep.include({
      status: 'completed',
      result: '# Q\n\nD: yes, by 12%.',
    });

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    env.llm.on(
      { model },
      async () => {
        await gate;
        return { content: 'never stored' };
      },
      1,
    );
    const slow = await create(conversationId, { title: 'Slow' });
    try {
      await eventually(async () => (await read(conversationId, slow.analysisId)).status === 'running');
      await env.deps.temporal.client.workflow
        .getHandle(workflowIds.analysis(org.organizationId, slow.analysisId, 1))
        .cancel();
      expect(await finished(conversationId, slow.analysisId)).to.deep.include({
        status: 'cancelled',
        result: null,
      });
    } finally {
      release();
    }
  });

  it('fails without asking the model when the organization has no credits left', async () => {
    const { model, conversationId } = await conversationWithAgent();
    const credits = env.deps.services.credits;
    await credits.grant(
      org.organizationId,
      -(await credits.balance(org.organizationId)),
      'test: empty the account',
    );
    expect(await credits.balance(org.organizationId)).to.equal(0);
    env.llm.on({ model }, { content: 'an answer that must never be paid for' });
    const broke = await finished(conversationId, (await create(conversationId)).analysisId);
    expect(broke).to.deep.include({
      status: 'failed',
      error: "the organization's credits are used up; an operator can grant more",
      result: null,
      artifactId: null,
    });
    expect(env.llm.chatRequests.filter((b) => b.model === model)).to.have.length(0);
    expect(await credits.balance(org.organizationId)).to.equal(0);
  });

  it('is reached only by those who may read the conversation, and answers bad input with 4xx', async () => {
    const { agentId, model, conversationId } = await conversationWithAgent();
    env.llm.on({ model }, { content: 'ok' });
    const analysis = await create(conversationId);
    const one = analysisPath(conversationId, `/${analysis.analysisId}`);
    const notFound = (r: { body: { error: { code: string } } }) =>
      expect(r.body.error.code).to.equal('not_found');

    // Another organization, another member's conversation, another conversation, an unknown id: 404 alike.
    const other = await createTestOrg(env, 'Other Analysis Org');
    const theirs = other.path(`/conversations/${conversationId}/analysis`);
    await as(env, other.owner.token).get(`${theirs}/${analysis.analysisId}`).expect(404).expect(notFound);
    await as(env, other.owner.token).get(theirs).expect(404).expect(notFound);
    await as(env, other.owner.token).post(theirs, { title: 'x' }).expect(404).expect(notFound);
    await as(env, other.owner.token).put(`${theirs}/${analysis.analysisId}`, { title: 'x' }).expect(404);
    await as(env, other.owner.token).delete(`${theirs}/${analysis.analysisId}`).expect(404);
    await as(env, org.chat.token).get(one).expect(404).expect(notFound);
    await as(env, org.chat.token).post(analysisPath(conversationId), { title: 'x' }).expect(404);
    await as(env, org.chat.token).delete(one).expect(404);
    const conv2 = await as(env, org.owner.token).post(org.path('/conversations'), { agentId }).expect(201);
    await as(env, org.owner.token)
      .get(org.path(`/conversations/${conv2.body.conversationId}/analysis/${analysis.analysisId}`))
      .expect(404)
      .expect(notFound);
    await as(env, org.owner.token).get(analysisPath(conversationId, '/ana_nope')).expect(404);
    await as(env, org.owner.token).get(org.path('/conversations/cnv_nope/analysis')).expect(404);
    // The admin reads every conversation, so its analyses.
    await as(env, org.admin.token).get(one).expect(200);
    await as(env, 'not-a-token').get(one).expect(401);

    const bad = async (res: Promise<{ status: number; body: { error: { code: string } } }>) => {
      const r = await res;
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error.code).to.equal('validation_failed');
    };
    const owner = as(env, org.owner.token);
    const list = analysisPath(conversationId);
    await bad(owner.post(list, {}));
    await bad(owner.post(list, { title: '' }));
    await bad(owner.post(list, { title: '   ' }));
    await bad(owner.post(list, { title: 'x'.repeat(201) }));
    await bad(owner.post(list, { title: 'x', description: 5 }));
    await bad(owner.post(list, { title: 'x', description: 'x'.repeat(20001) }));
    await bad(owner.post(list, { title: 'x', status: 'completed' }));
    await bad(owner.post(list, [{ title: 'x' }]));
    await bad(owner.put(one, {}));
    await bad(owner.put(one, { title: ' ' }));
    await bad(owner.put(one, { rerun: 'yes' }));
    await bad(owner.put(one, { run: 5 }));
    await bad(owner.get(`${list}?limit=0`));
    await bad(owner.get(`${list}?cursor=-1`));
    await bad(owner.get(`${list}?status=completed`));
    await bad(owner.get(analysisPath(conversationId, `/${'x'.repeat(101)}`)));
    expect(await stored(env, 'analyses').countDocuments({ conversationId })).to.equal(1);

    // No agent left to work on it: 409, nothing stored.
    await env.deps.repos.tenant(org.organizationId).agents.remove(agentId);
    const gone = await owner.post(list, { title: 'x' }).expect(409);
    expect(gone.body.error.code).to.equal('conflict');
    await owner.put(one, { title: 'changed' }).expect(409);
    expect(await stored(env, 'analyses').countDocuments({ conversationId })).to.equal(1);
  });
});
