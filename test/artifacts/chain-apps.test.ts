import { expect } from 'chai';
import { createRunnableChain, finished } from '@test/helpers/chains';
import { appHtml, uploadArtifact } from '@test/helpers/artifacts';
import { as } from '@test/helpers/org';
import { useWorkerAndOrg } from '@test/helpers/worker';

describe('apps run action chains (the workflows their manifests declare)', function () {
  this.timeout(120_000);
  const suite = useWorkerAndOrg('Chain Apps Org');

  it('approves only runnable chains and starts one run per app request', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        instructions: 'Double {{input.n}}',
        outputSchema: { type: 'object', properties: { twice: { type: 'number' } } },
      },
    ]);
    chain.answer({ content: '{"twice": 2}' });
    const idle = await createRunnableChain(env, org, [{ stepOrder: 1, enabled: false }]);
    const admin = as(env, org.admin.token);

    const unrunnable = await uploadArtifact(env, org, org.chat.token, {
      content: appHtml({ workflows: [chain.chainId, idle.chainId, 'chn_missing'], tables: [] }),
    });
    const refused = await admin.put(org.path(`/artifacts/${unrunnable.artifactId}/app-manifest`)).expect(400);
    expect(refused.body.error.details.missingWorkflows).to.deep.equal([idle.chainId, 'chn_missing']);

    const good = await uploadArtifact(env, org, org.chat.token, {
      content: appHtml({ workflows: [chain.chainId], tables: [] }),
    });
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${good.artifactId}/pin`))
      .expect(200);
    const approved = await admin.put(org.path(`/artifacts/${good.artifactId}/app-manifest`)).expect(200);
    expect(approved.body.workflowBindings).to.deep.equal({ [chain.chainId]: chain.chainId });
    const opened = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${good.artifactId}/app-session`))
      .expect(201);
    const token = new URL(opened.body.url as string).searchParams.get('session')!;
    const runs = org.path(`/artifacts/${good.artifactId}/app/workflows/${chain.chainId}/runs`);
    const start = () =>
      as(env, token)
        .post(runs, { input: { n: 1 }, requestId: 'req-1' })
        .expect(202);
    const first = await start();
    const again = await start();
    expect(again.body.runId).to.equal(first.body.runId);
    const run = await finished(env, org, chain.chainId, first.body.runId as string);
    expect(run.status).to.equal('success');
    expect(run.state).to.deep.equal({ input: { n: 1 }, twice: 2 });
    const listed = await admin.get(org.path(`/chains/${chain.chainId}/runs`)).expect(200);
    expect(listed.body.items.map((r: { triggerType: string }) => r.triggerType)).to.deep.equal(['app']);
  });

  it('workflowBindings (map workflow name to workflow id): a manifest may name its workflows; a shared name is 400', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(
      env,
      org,
      [
        {
          stepOrder: 1,
          instructions: 'Total {{input.n}}',
          outputSchema: { type: 'object', properties: { total: { type: 'number' } } },
        },
      ],
      { name: 'Invoice totals' },
    );
    chain.answer({ content: '{"total": 3}' });
    for (let i = 0; i < 2; i++) await createRunnableChain(env, org, [{ stepOrder: 1 }], { name: 'Twin' });
    const admin = as(env, org.admin.token);
    const approve = async (workflows: string[]) => {
      const a = await uploadArtifact(env, org, org.chat.token, {
        content: appHtml({ workflows, tables: [] }),
      });
      return {
        artifactId: a.artifactId,
        res: await admin.put(org.path(`/artifacts/${a.artifactId}/app-manifest`)),
      };
    };

    const shared = await approve(['Twin']);
    expect(shared.res.status).to.equal(400);
    expect(shared.res.body.error.code).to.equal('app_manifest_unresolved');
    expect(shared.res.body.error.message)
      .to.contain('workflow names shared by several workflows')
      .and.contain('Twin');
    expect(shared.res.body.error.details.ambiguousWorkflows).to.deep.equal(['Twin']);

    const named = await approve(['Invoice totals']);
    expect(named.res.status, JSON.stringify(named.res.body)).to.equal(200);
    expect(named.res.body.workflowBindings).to.deep.equal({ 'Invoice totals': chain.chainId });
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${named.artifactId}/pin`))
      .expect(200);
    const opened = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${named.artifactId}/app-session`))
      .expect(201);
    const token = new URL(opened.body.url as string).searchParams.get('session')!;
    const started = await as(env, token)
      .post(
        org.path(`/artifacts/${named.artifactId}/app/workflows/${encodeURIComponent('Invoice totals')}/runs`),
        { input: { n: 3 }, requestId: 'req-named' },
      )
      .expect(202);
    expect(started.body.workflowId).to.equal(chain.chainId);
    const run = await finished(env, org, chain.chainId, started.body.runId as string);
    expect(run.status).to.equal('success');
  });
});
