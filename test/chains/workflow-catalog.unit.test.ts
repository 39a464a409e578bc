import { expect } from 'chai';
import type { WorkflowStartRequest } from '@lib/artifacts/workflow-catalog';
import type { StartRun } from '@lib/chains/chain-runs.service';
import type { ChainsStore } from '@lib/chains/store';
import { ChainWorkflowCatalog } from '@lib/chains/workflow-catalog';
import type { Tenants } from '@lib/db/tenants';
import { AppError, badRequest, notFound } from '@lib/errors';

/*
 * The organization's workflows as apps see them (docs/artifacts.md, app manifests): a declared workflow binds by
 * actionChainId before name, a name must belong to exactly one chain, a chain without an enabled step cannot run
 * (missing), and everything is reported in the order the manifest declares it. A start is one run per request.
 * The chains are an in-memory stand-in of the organization's store.
 */
const chains = [
  { _id: 'chn_a', name: 'Alpha' },
  { _id: 'chn_t', name: 'Triage' },
  { _id: 'chn_d1', name: 'Dup' },
  { _id: 'chn_d2', name: 'Dup' },
  { _id: 'chn_off', name: 'Off' },
  // its name is another chain's id: the id wins
  { _id: 'chn_x', name: 'chn_a' },
];
const enabled: Record<string, boolean[]> = {
  chn_a: [true],
  chn_t: [false, true],
  chn_d1: [true],
  chn_d2: [true],
  chn_off: [false],
  chn_x: [true],
};
const store = {
  tenant: () => ({
    chains: {
      getMany: (ids: string[]) => Promise.resolve(chains.filter((c) => ids.includes(c._id))),
      listByNames: (names: string[]) => Promise.resolve(chains.filter((c) => names.includes(c.name))),
      listSteps: (id: string) => Promise.resolve((enabled[id] ?? []).map((e) => ({ enabled: e }))),
    },
  }),
} as unknown as Tenants<ChainsStore>;

function catalogWith(startRun: (org: string, run: StartRun) => Promise<{ runId: string }>) {
  return new ChainWorkflowCatalog(store, { startRun } as never);
}

describe('the chain workflow catalog of apps', () => {
  it('binds ids before names, refuses ambiguous names and chains that cannot run, in the declared order', async () => {
    const catalog = catalogWith(() => Promise.resolve({ runId: 'unused' }));
    const resolution = await catalog.resolve('org_1', ['Off', 'nope', 'Dup', 'Triage', 'chn_a', 'Alpha']);
    expect(resolution).to.deep.equal({
      bindings: [
        { workflow: 'Triage', workflowId: 'chn_t' },
        { workflow: 'chn_a', workflowId: 'chn_a' },
        { workflow: 'Alpha', workflowId: 'chn_a' },
      ],
      missing: ['Off', 'nope'],
      ambiguous: ['Dup'],
    });
    expect(await catalog.resolve('org_1', [])).to.deep.equal({ bindings: [], missing: [], ambiguous: [] });
  });

  it('starts one app run per request: its id derives from the version and the request', async () => {
    const started: Array<{ organizationId: string; run: StartRun }> = [];
    const catalog = catalogWith((organizationId, run) => {
      started.push({ organizationId, run });
      return Promise.resolve({ runId: run.runId! });
    });
    const request: WorkflowStartRequest = {
      organizationId: 'org_1',
      workflowId: 'chn_a',
      input: { message: 'hi' },
      userId: 'usr_1',
      requestId: 'req_1',
      trigger: { type: 'app', artifactId: 'art_1', versionId: 'ver_1' },
    };
    const first = await catalog.start(request);
    expect(await catalog.start(request)).to.deep.equal(first);
    expect(first.runId).to.match(/^run_/);
    const other = [
      await catalog.start({ ...request, requestId: 'req_2' }),
      await catalog.start({ ...request, trigger: { ...request.trigger, versionId: 'ver_2' } }),
      await catalog.start({ ...request, trigger: { ...request.trigger, artifactId: 'art_2' } }),
    ].map((r) => r.runId);
    expect(new Set([first.runId, ...other]).size).to.equal(4);
    expect(started[0]).to.deep.equal({
      organizationId: 'org_1',
      run: {
        actionChainId: 'chn_a',
        payload: { message: 'hi' },
        triggerType: 'app',
        startedByUserId: 'usr_1',
        runId: first.runId,
      },
    });
  });

  it('answers a chain gone since approval as the workflow not found, and passes other refusals on', async () => {
    const gone = catalogWith(() => Promise.reject(notFound('action chain')));
    const request = {
      organizationId: 'org_1',
      workflowId: 'chn_gone',
      input: {},
      userId: 'usr_1',
      requestId: 'req_1',
      trigger: { type: 'app', artifactId: 'art_1', versionId: 'ver_1' },
    } as const;
    const err = await gone.start(request).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).message).to.equal('workflow not found');
    const refused = catalogWith(() => Promise.reject(badRequest('the payload does not fit')));
    const other = await refused.start(request).then(
      () => null,
      (e: unknown) => e,
    );
    expect((other as AppError).status).to.equal(400);
    expect((other as AppError).message).to.equal('the payload does not fit');
  });
});
