import { expect } from 'chai';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { RequestContext } from '@lib/auth/context';
import type { StepDoc } from '@lib/chains/chain.schema';
import type { ChainRun } from '@lib/chains/chain-runs.repository';
import { ChainRunsService } from '@lib/chains/chain-runs.service';
import type { ChainsService } from '@lib/chains/chains.service';
import type { ChainsStore } from '@lib/chains/store';
import type { Tenants } from '@lib/db/tenants';
import { notFound } from '@lib/errors';
import { refusal } from '@test/helpers/errors';
import type { TemporalDeps } from '@lib/temporal/client';

/*
 * Runs of action chains as the API starts and re-runs them (docs/chains.md; openapi.yaml runChain, getChainRun),
 * over in-memory stand-ins of the runs, Temporal and admission: a run a person or an app asks for takes a slot,
 * given back when the run is refused; a refused input writes no run; a start that fails marks the run failed
 * unless its caller retries it; a deterministic id finds its run; a re-run takes no payload, needs a finished run
 * of this chain (or resetToRunning, which cancels the execution it supersedes).
 */
const ctx = { organizationId: 'org_1', userId: 'usr_1' } as RequestContext;
const step = (stepOrder: number, inputSchema?: object) =>
  ({
    _id: `stp_${stepOrder}`,
    stepOrder,
    enabled: true,
    inputSchemaJson: inputSchema ? JSON.stringify(inputSchema) : null,
    forEachElement: null,
  }) as StepDoc;

class World {
  runs = new Map<string, ChainRun>();
  started: Array<{ workflowId: string; args: unknown[] }> = [];
  cancelled: string[] = [];
  /** executions that have ended: Temporal no longer finds them to cancel */
  ended = new Set<string>();
  admitted: string[] = [];
  admittedKinds: string[] = [];
  countedKinds: string[] = [];
  startOptions: Array<Record<string, unknown>> = [];
  listed: unknown[] = [];
  undone = 0;
  startFails = false;
  /** what Temporal answers a cancel with, for an execution it finds */
  cancelError?: Error;
  steps: StepDoc[] = [
    step(1, { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }),
    step(2),
  ];

  readonly service = new ChainRunsService(
    {
      tenant: () => ({
        chains: { listSteps: () => Promise.resolve(this.steps) },
        chainRuns: {
          get: (id: string) => Promise.resolve(this.runs.get(id) ?? null),
          list: (_chainId: string, opts: unknown) => {
            this.listed.push(opts);
            return Promise.resolve({ items: [], total: 0 });
          },
          create: (f: { runId: string } & Partial<ChainRun>) => {
            if (this.runs.has(f.runId))
              return Promise.reject(Object.assign(new Error('dup'), { code: 11000 }));
            const { runId, ...rest } = f;
            const run = {
              ...rest,
              _id: runId,
              organizationId: 'org_1',
              generation: 1,
              stepResults: {},
            } as ChainRun;
            this.runs.set(runId, run);
            return Promise.resolve(run);
          },
          rerun: (id: string, set: Partial<ChainRun>, anyState: boolean) => {
            const run = this.runs.get(id);
            if (!run || (!anyState && !['success', 'failed'].includes(run.status)))
              return Promise.resolve(null);
            Object.assign(run, set, { generation: run.generation + 1 });
            return Promise.resolve(run);
          },
          failUnstarted: (id: string, _generation: number, statusMessage: string) => {
            Object.assign(this.runs.get(id)!, { status: 'failed', statusMessage });
            return Promise.resolve();
          },
        },
      }),
    } as unknown as Tenants<ChainsStore>,
    {
      taskQueue: 'q',
      client: {
        workflow: {
          start: (_type: string, o: { workflowId: string; args: unknown[] }) => {
            if (this.startFails) return Promise.reject(new Error('Temporal is unreachable'));
            this.started.push({ workflowId: o.workflowId, args: o.args });
            this.startOptions.push(o);
            return Promise.resolve();
          },
          getHandle: (id: string) => ({
            cancel: () => {
              if (this.ended.has(id)) return Promise.reject(new WorkflowNotFoundError('gone', id, undefined));
              if (this.cancelError) return Promise.reject(this.cancelError);
              this.cancelled.push(id);
              return Promise.resolve();
            },
          }),
        },
      },
    } as unknown as TemporalDeps,
    {
      chain: (_c: unknown, id: string) =>
        id === 'chn_1' ? Promise.resolve({ _id: id }) : Promise.reject(notFound('action chain')),
    } as unknown as ChainsService,
    {
      admit: (_org: string, kind: string, workflowId: string) => {
        this.admitted.push(workflowId);
        this.admittedKinds.push(kind);
        return Promise.resolve({ undo: () => Promise.resolve(void this.undone++) });
      },
      startCounted: (
        _org: string,
        kind: string,
        _id: string,
        start: () => Promise<{ alreadyStarted: boolean }>,
      ) => {
        this.countedKinds.push(kind);
        return start();
      },
    },
    // CHAIN_FANOUT_MAX
    3,
  );
}

describe('chain runs service', () => {
  it('starts an API run: a slot taken, the run pending with its input, its first execution started', async () => {
    const w = new World();
    // a disabled step before it does not decide what the input must be
    w.steps.unshift({
      ...step(0, { type: 'object', properties: { other: {} }, required: ['other'] }),
      enabled: false,
    });
    const { runId, actionChainId } = await w.service.run(ctx, 'chn_1', { payload: { message: 'hi' } }, false);
    expect(actionChainId).to.equal('chn_1');
    const run = w.runs.get(runId)!;
    expect(run).to.include({
      status: 'pending',
      triggerType: 'api',
      startedByUserId: 'usr_1',
      actionChainId: 'chn_1',
    });
    expect(JSON.parse(run.stateJson)).to.deep.equal({ input: { message: 'hi' } });
    expect(w.admitted).to.deep.equal([`chain-run-org_1-${runId}-1`]);
    expect(w.started.map((s) => s.workflowId)).to.deep.equal([`chain-run-org_1-${runId}-1`]);
    expect(w.started[0]!.args[0]).to.deep.include({
      organizationId: 'org_1',
      runId,
      generation: 1,
      actionChainId: 'chn_1',
    });
  });

  it('refuses, writing no run and giving the slot back: a chain that does not exist, an onlyStep it lacks, an input that does not fit', async () => {
    const w = new World();
    expect(
      (await refusal(w.service.run(ctx, 'chn_none', { payload: { message: 'hi' } }, false))).status,
    ).to.equal(404);
    const only = await refusal(
      w.service.run(ctx, 'chn_1', { payload: { message: 'hi' }, onlyStep: 7 }, false),
    );
    expect([only.status, only.message]).to.deep.equal([
      400,
      'onlyStep: 7 does not exist or is not visible to you as the stepOrder of a step of this chain',
    ]);
    const input = await refusal(w.service.run(ctx, 'chn_1', { payload: { message: 5 } }, false));
    expect(input.status).to.equal(400);
    expect(input.message).to.equal(
      "the payload does not fit the first step's inputSchema: payload/message must be string",
    );
    expect(w.runs.size).to.equal(0);
    expect(w.started).to.deep.equal([]);
    expect(w.undone).to.equal(3);
  });

  it("marks a run it could not start failed, unless its caller retries the start; a trigger's run takes no slot", async () => {
    const w = new World();
    w.startFails = true;
    const outcome = await w.service.run(ctx, 'chn_1', { payload: { message: 'hi' } }, false).then(
      () => 'started',
      (err: unknown) => (err as Error).message,
    );
    expect(outcome).to.equal('Temporal is unreachable');
    const [failed] = [...w.runs.values()];
    expect(failed).to.include({
      status: 'failed',
      statusMessage: 'the run could not be started; run it again',
    });

    const retried = w.service.startRun('org_1', {
      actionChainId: 'chn_1',
      payload: { message: 'hi' },
      triggerType: 'webhook',
      startedByUserId: 'usr_1',
      runId: 'run_trigger',
      retriedByCaller: true,
    });
    expect(
      await retried.then(
        () => 'started',
        () => 'refused',
      ),
    ).to.equal('refused');
    expect(w.runs.get('run_trigger')?.status).to.equal('pending');
    expect(w.admitted).to.have.length(1);
  });

  it('finds the run a deterministic id already names instead of making another', async () => {
    const w = new World();
    const start = {
      actionChainId: 'chn_1',
      payload: { message: 'hi' },
      triggerType: 'schedule' as const,
      startedByUserId: 'usr_1',
      runId: 'run_fixed',
    };
    const first = await w.service.startRun('org_1', start);
    const again = await w.service.startRun('org_1', { ...start, payload: { message: 'other' } });
    expect(again).to.deep.equal(first);
    expect([...w.runs.keys()]).to.deep.equal(['run_fixed']);
    expect(JSON.parse(w.runs.get('run_fixed')!.stateJson)).to.deep.equal({ input: { message: 'hi' } });
  });

  it('re-runs only a finished run of this chain, without a payload; resetToRunning cancels the execution it supersedes', async () => {
    const w = new World();
    const { runId } = await w.service.run(ctx, 'chn_1', { payload: { message: 'hi' } }, false);
    const payload = await refusal(w.service.run(ctx, 'chn_1', { runId, payload: { message: 'x' } }, false));
    expect(payload.message).to.equal(
      "payload is the input of a new run; a re-run (runId) uses the run's state",
    );
    expect((await refusal(w.service.run(ctx, 'chn_1', { runId: 'run_none' }, false))).message).to.equal(
      'runId: run_none does not exist or is not visible to you',
    );
    w.runs.get(runId)!.actionChainId = 'chn_other';
    expect((await refusal(w.service.run(ctx, 'chn_1', { runId }, false))).status).to.equal(400);
    w.runs.get(runId)!.actionChainId = 'chn_1';

    // still pending: a conflict, and the slot it took given back
    const undoneBefore = w.undone;
    expect((await refusal(w.service.run(ctx, 'chn_1', { runId }, false))).status).to.equal(409);
    expect(w.undone).to.equal(undoneBefore + 1);

    w.runs.get(runId)!.status = 'success';
    await w.service.run(ctx, 'chn_1', { runId }, false);
    expect(w.runs.get(runId)).to.include({ status: 'pending', generation: 2 });
    expect(w.started.map((s) => s.workflowId)).to.include(`chain-run-org_1-${runId}-2`);
    expect(w.cancelled).to.deep.equal([]);

    // the execution it supersedes has ended already: nothing to cancel
    w.ended.add(`chain-run-org_1-${runId}-2`);
    await w.service.run(ctx, 'chn_1', { runId }, true);
    expect(w.runs.get(runId)).to.include({ status: 'running', generation: 3 });
    expect(w.cancelled).to.deep.equal([]);
    // still in flight (running): cancelled
    await w.service.run(ctx, 'chn_1', { runId }, true);
    expect(w.runs.get(runId)?.generation).to.equal(4);
    expect(w.cancelled).to.deep.equal([`chain-run-org_1-${runId}-3`]);
    expect(w.started.map((s) => s.workflowId).slice(-2)).to.deep.equal([
      `chain-run-org_1-${runId}-3`,
      `chain-run-org_1-${runId}-4`,
    ]);
  });

  it('fails a pending run its starts gave up on, and nothing else; shows a run only under its own chain', async () => {
    const w = new World();
    const { runId } = await w.service.run(ctx, 'chn_1', { payload: { message: 'hi' } }, false);
    await w.service.failPending('org_1', runId, 'gave up');
    expect(w.runs.get(runId)).to.include({ status: 'failed', statusMessage: 'gave up' });
    w.runs.get(runId)!.status = 'success';
    await w.service.failPending('org_1', runId, 'again');
    expect(w.runs.get(runId)?.status).to.equal('success');
    await w.service.failPending('org_1', 'run_none', 'x');
    expect(await w.service.statusOf('org_1', 'run_none')).to.equal(null);

    w.runs.get(runId)!.actionChainId = 'chn_other';
    expect((await refusal(w.service.get(ctx, 'chn_1', runId))).message).to.equal('run not found');
  });

  it('names onlyStep in the execution and plans only that step; counts it as a chain run with its search attributes', async () => {
    const w = new World();
    const { runId } = await w.service.run(ctx, 'chn_1', { payload: { message: 'hi' }, onlyStep: 2 }, false);
    expect(runId).to.match(/^run_/);
    expect(w.runs.get(runId)!.messageId).to.match(/^msg_/);
    expect(w.started[0]!.args[0]).to.deep.include({
      onlyStep: 2,
      plan: { steps: [{ stepId: 'stp_2', stepOrder: 2, name: undefined }] },
    });
    expect(w.admittedKinds).to.deep.equal(['chain_runs']);
    expect(w.countedKinds).to.deep.equal(['chain_runs']);
    const attributes = (o: Record<string, unknown>) =>
      (o.typedSearchAttributes as Array<{ key: { name: string }; value: unknown }>).map((p) => [
        p.key.name,
        p.value,
      ]);
    expect(attributes(w.startOptions[0]!)).to.deep.equal([
      ['OrganizationId', 'org_1'],
      ['ActionChainId', 'chn_1'],
    ]);

    await w.service.run(ctx, 'chn_1', { payload: { message: 'hi' } }, false);
    expect(w.started[1]!.args[0]).to.not.have.property('onlyStep');
    const { runId: triggered } = await w.service.startRun('org_1', {
      actionChainId: 'chn_1',
      payload: { message: 'hi' },
      triggerType: 'webhook',
      startedByUserId: 'usr_1',
      triggerId: 'whk_1',
    });
    expect(triggered).to.match(/^run_/);
    expect(attributes(w.startOptions[2]!)).to.deep.equal([
      ['OrganizationId', 'org_1'],
      ['ActionChainId', 'chn_1'],
      ['TriggerId', 'whk_1'],
    ]);
    expect(w.countedKinds).to.deep.equal(['chain_runs', 'chain_runs', 'chain_runs']);
  });

  it("refuses an API run whose input fans out too wide at a step it will run; a trigger's run is not refused", async () => {
    const w = new World();
    w.steps = [{ ...step(1), name: 'each', forEachElement: '$.input.items', runIf: null }, step(2)];
    const payload = { items: [1, 2, 3, 4] };
    const wide = await refusal(w.service.run(ctx, 'chn_1', { payload }, false));
    expect([wide.status, wide.code]).to.deep.equal([400, 'fanout_too_large']);
    expect(w.runs.size).to.equal(0);
    // only step 2 runs: step 1's fan-out does not matter
    await w.service.run(ctx, 'chn_1', { payload, onlyStep: 2 }, false);
    await w.service.run(ctx, 'chn_1', { payload: { items: [1, 2, 3] } }, false);
    await w.service.startRun('org_1', {
      actionChainId: 'chn_1',
      payload,
      triggerType: 'webhook',
      startedByUserId: 'usr_1',
    });
    expect(w.runs.size).to.equal(3);
  });

  it('names each problem of a payload in the details; a chain with no enabled step takes any payload', async () => {
    const w = new World();
    const input = await refusal(w.service.run(ctx, 'chn_1', { payload: { message: 5 } }, false));
    expect(input.details).to.deep.equal([{ message: 'payload/message must be string' }]);
    w.steps = [step(1, { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } } })];
    const two = await refusal(w.service.run(ctx, 'chn_1', { payload: { a: 1, b: 'x' } }, false));
    expect(two.message).to.equal(
      "the payload does not fit the first step's inputSchema: payload/a must be string; payload/b must be number",
    );
    w.steps = [{ ...step(1, { type: 'object', required: ['x'] }), enabled: false }];
    const { runId } = await w.service.run(ctx, 'chn_1', { payload: { anything: true } }, false);
    expect(w.runs.has(runId)).to.equal(true);
  });

  it('admits a re-run as the next generation, says why a pending run is not re-run, and passes on a failed cancel', async () => {
    const w = new World();
    const { runId } = await w.service.run(ctx, 'chn_1', { payload: { message: 'hi' } }, false);
    const conflict = await refusal(w.service.run(ctx, 'chn_1', { runId }, false));
    expect(conflict.message).to.equal(
      'the run is still pending or running; re-run it once it has finished, or with resetToRunning=true',
    );
    w.runs.get(runId)!.status = 'failed';
    const before = w.runs.get(runId)!.messageId;
    const rerun = await w.service.run(ctx, 'chn_1', { runId }, false);
    expect(rerun.messageId).to.match(/^msg_/).and.not.equal(before);
    expect(w.admitted.at(-1)).to.equal(`chain-run-org_1-${runId}-2`);

    w.cancelError = new Error('Temporal is unreachable');
    const failed = await w.service.run(ctx, 'chn_1', { runId }, true).then(
      () => 'started',
      (err: unknown) => (err as Error).message,
    );
    expect(failed).to.equal('Temporal is unreachable');
  });

  it("lists a chain's runs oldest first unless asked otherwise, and reads a run for a trigger with no access check", async () => {
    const w = new World();
    await w.service.list(ctx, 'chn_1', { limit: 10, offset: 0 });
    expect(w.listed).to.deep.equal([{ limit: 10, offset: 0, orderBy: 'created_at', descending: false }]);
    const { runId } = await w.service.run(ctx, 'chn_1', { payload: { message: 'hi' } }, false);
    expect((await w.service.getRun('org_1', runId))?._id).to.equal(runId);
    expect(await w.service.getRun('org_1', 'run_none')).to.equal(null);
  });

  it("creates a run a webhook delivery's workflow runs itself, gives that workflow its execution again, and cancels that workflow when a re-run supersedes it", async () => {
    const w = new World();
    const start = {
      actionChainId: 'chn_1',
      payload: { message: 'hi' },
      triggerType: 'webhook' as const,
      startedByUserId: 'usr_1',
      runId: 'run_inline',
      firstExecutionWorkflowId: 'webhook-delivery-1',
    };
    const { run: fresh } = await w.service.createRun('org_1', { ...start, runId: undefined });
    expect(fresh._id).to.match(/^run_/);
    const { input } = await w.service.createRun('org_1', start);
    expect(w.runs.get('run_inline')).to.include({ firstExecutionWorkflowId: 'webhook-delivery-1' });
    expect(w.started).to.deep.equal([]);
    expect(await w.service.firstExecution('org_1', 'run_inline', 'webhook-delivery-1')).to.deep.equal(input);
    expect(await w.service.firstExecution('org_1', 'run_inline', 'webhook-delivery-2')).to.equal(null);
    expect(await w.service.firstExecution('org_1', 'run_none', 'webhook-delivery-1')).to.equal(null);
    // a run of its own names no such workflow
    await w.service.createRun('org_1', { ...start, runId: 'run_own', firstExecutionWorkflowId: undefined });
    expect(w.runs.get('run_own')).to.not.have.property('firstExecutionWorkflowId');

    // its first execution runs in the delivery's workflow: a re-run that supersedes it cancels that workflow
    await w.service.run(ctx, 'chn_1', { runId: 'run_inline' }, true);
    expect(w.cancelled).to.deep.equal(['webhook-delivery-1']);
    // once re-run, the delivery's workflow no longer runs it
    expect(await w.service.firstExecution('org_1', 'run_inline', 'webhook-delivery-1')).to.equal(null);
    await w.service.run(ctx, 'chn_1', { runId: 'run_inline' }, true);
    expect(w.cancelled).to.deep.equal(['webhook-delivery-1', 'chain-run-org_1-run_inline-2']);
  });
});
