import { WorkflowNotFoundError } from '@temporalio/client';
import { WORKFLOWS, workflowIds, type ChainRunInput, type ChainRunWorkflow } from '@contracts';
import type { RequestContext } from '@lib/auth/context';
import { undoOnFailure, type Admission, type Slot } from '@lib/admission/admission';
import { createOrFind } from '@lib/db/duplicate-key';
import { badRequest, conflict, invalidReference, notFound } from '@lib/errors';
import { derivedId, newId } from '@lib/ids';
import { page, parseOrderBy, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import type { StepDoc } from './chain.schema';
import type { TriggerType } from './chain-run.schema';
import type { ChainRun } from './chain-runs.repository';
import type { ChainOrderField } from './chains.repository';
import type { ChainsService } from './chains.service';
import { refuseLongFanOut } from './fan-out-limit';
import { runPlan } from './run-plan';
import { firstStep, validatorFor } from './step-fields';
import { toRunView } from './views';
import type { ChainsStore } from './store';

export interface RunBody {
  payload?: Record<string, unknown>;
  runId?: string;
  onlyStep?: number;
}

export interface StartRun {
  actionChainId: string;
  payload: Record<string, unknown>;
  triggerType: TriggerType;
  /** whose rights the run uses */
  startedByUserId: string;
  /** a deterministic id makes the start idempotent (a retried trigger finds its run); new otherwise */
  runId?: string;
  onlyStep?: number;
  /** the schedule trigger or webhook that started the run (its TriggerId search attribute) */
  triggerId?: string;
  /** The caller retries a failed start itself (a trigger handler, whose retry starts a pending run again): a start
   * that fails leaves the run pending instead of failed, and the caller marks it failed when it gives up. */
  retriedByCaller?: boolean;
  /** The workflow that runs the first execution itself (a webhook delivery's, see firstExecutionWorkflowId):
   * createRun only, nothing started. */
  firstExecutionWorkflowId?: string;
}

/** Runs whose starter waits for the answer: an input that fans out too wide is a 400 for them. */
const REFUSED_AT_START: readonly TriggerType[] = ['api', 'app', 'agent'];

/** Runs a person or an app asks for wait for room under the organization's bound (429 beyond it); the others
 * were admitted with what led to them (a delivery, a fire, an ingested file) and are only counted. */
const ADMITTED_AT_START: readonly TriggerType[] = ['api', 'app'];

/** A run id derived from a business key (a trigger's delivery, a tool call): a retry finds the same run. */
export function derivedRunId(key: string): string {
  return derivedId('run', [key]);
}

/** Runs of action chains: started by the API, agents, ETL rules, schedules and webhooks. */
export class ChainRunsService {
  constructor(
    private readonly repos: Tenants<ChainsStore>,
    private readonly temporal: TemporalDeps,
    private readonly chains: ChainsService,
    private readonly admission: Pick<Admission, 'admit' | 'startCounted'>,
    /** CHAIN_FANOUT_MAX (its default unless given) */
    private readonly fanOutMax = 1000,
  ) {}

  private runs(organizationId: string) {
    return this.repos.tenant(organizationId).chainRuns;
  }

  /** 400 unless the payload fits the input schema of the chain's first enabled step. */
  private checkInput(steps: StepDoc[], payload: Record<string, unknown>) {
    const first = firstStep(steps.filter((s) => s.enabled));
    if (!first?.inputSchemaJson) return;
    const validate = validatorFor(first.inputSchemaJson);
    if (!validate(payload)) {
      const problems = (validate.errors ?? []).map(
        (e) => `payload${e.instancePath} ${e.message ?? 'is invalid'}`,
      );
      throw badRequest(
        `the payload does not fit the first step's inputSchema: ${problems.join('; ')}`,
        problems.map((message) => ({ message })),
      );
    }
  }

  private checkOnlyStep(steps: StepDoc[], onlyStep: number | undefined) {
    if (onlyStep !== undefined && !steps.some((s) => s.stepOrder === onlyStep))
      throw invalidReference('onlyStep', String(onlyStep), ' as the stepOrder of a step of this chain');
  }

  /** The input of an execution of `run`, with the steps it runs planned from the steps read with it. */
  private executionOf(run: ChainRun, steps: StepDoc[], onlyStep: number | undefined): ChainRunInput {
    return {
      organizationId: run.organizationId,
      runId: run._id,
      generation: run.generation,
      actionChainId: run.actionChainId,
      ...(onlyStep !== undefined ? { onlyStep } : {}),
      plan: runPlan(steps, run.stepResults, onlyStep),
    };
  }

  /** Starts an execution of a run, counted as one of the organization's unfinished chain runs (`admitted`: see
   * Admission.startCounted). */
  private async launch(input: ChainRunInput, triggerId?: string, admitted?: Slot) {
    const { organizationId } = input;
    const workflowId = workflowIds.chainRun(organizationId, input.runId, input.generation);
    await this.admission.startCounted(
      organizationId,
      'chain_runs',
      workflowId,
      () =>
        startIdempotent<ChainRunWorkflow>(this.temporal, WORKFLOWS.chainRun, {
          workflowId,
          args: [input],
          attributes: { organizationId, actionChainId: input.actionChainId, triggerId },
        }),
      admitted,
    );
  }

  /** A run a person or an app asks for waits for room under the organization's bound (429 beyond it). */
  private async admit(organizationId: string, triggerType: TriggerType, runId: string, generation: number) {
    if (!ADMITTED_AT_START.includes(triggerType)) return undefined;
    return this.admission.admit(
      organizationId,
      'chain_runs',
      workflowIds.chainRun(organizationId, runId, generation),
    );
  }

  /** Creates a new run (or finds the one a deterministic runId already names) without starting it. */
  async createRun(organizationId: string, start: StartRun) {
    // Read together: a missing chain is a 404 (and has no steps) before any 400 about its steps.
    const [, steps] = await Promise.all([
      this.chains.chain({ organizationId }, start.actionChainId),
      this.repos.tenant(organizationId).chains.listSteps(start.actionChainId),
    ]);
    this.checkOnlyStep(steps, start.onlyStep);
    this.checkInput(steps, start.payload);
    // A caller who waits for the answer (the API, an app, an agent's tool call) hears at once that the input
    // fans out too wide; a trigger's run fails at that step instead, where its runs are looked at.
    if (REFUSED_AT_START.includes(start.triggerType)) {
      const planned = new Set(runPlan(steps, {}, start.onlyStep).steps.map((s) => s.stepId));
      refuseLongFanOut(
        steps.filter((s) => planned.has(s._id)),
        start.payload,
        this.fanOutMax,
      );
    }
    const runId = start.runId ?? newId('run');
    const create = () =>
      this.runs(organizationId).create({
        runId,
        actionChainId: start.actionChainId,
        triggerType: start.triggerType,
        stateJson: JSON.stringify({ input: start.payload }),
        messageId: newId('msg'),
        startedByUserId: start.startedByUserId,
        status: 'pending',
        ...(start.firstExecutionWorkflowId
          ? { firstExecutionWorkflowId: start.firstExecutionWorkflowId }
          : {}),
      });
    // A fresh id cannot be taken. A deterministic one is usually at its first use (a trigger's, a tool call's or
    // an app request's first attempt): insert first, and look the run up only when the id is already taken.
    const run = start.runId
      ? (await createOrFind(() => this.runs(organizationId).get(runId), create)).doc
      : await create();
    const input = this.executionOf(run, steps, start.onlyStep);
    return { run, input };
  }

  /** A new run (or the one a deterministic runId already names), started durably. */
  async startRun(organizationId: string, start: StartRun) {
    const runId = start.runId ?? newId('run');
    const admitted = await this.admit(organizationId, start.triggerType, runId, 1);
    const { run, input } = await undoOnFailure(admitted, () =>
      this.createRun(organizationId, { ...start, runId }),
    );
    if (start.retriedByCaller) await this.launch(input, start.triggerId, admitted);
    else await this.launchOrFail(organizationId, input, start.triggerId, admitted);
    return { messageId: run.messageId, runId: run._id, actionChainId: start.actionChainId };
  }

  /** A run that could not be started is marked failed (it would wait as pending forever otherwise). */
  private async launchOrFail(
    organizationId: string,
    input: ChainRunInput,
    triggerId?: string,
    admitted?: Slot,
  ) {
    try {
      await this.launch(input, triggerId, admitted);
    } catch (err) {
      await this.runs(organizationId).failUnstarted(
        input.runId,
        input.generation,
        'the run could not be started; run it again',
      );
      throw err;
    }
  }

  /** POST …/run: a new run with `payload`, or the next execution of `runId` (from the first step that did not
   * succeed, or only `onlyStep`). */
  async run(ctx: RequestContext, actionChainId: string, body: RunBody, resetToRunning: boolean) {
    if (!body.runId)
      return this.startRun(ctx.organizationId, {
        actionChainId,
        payload: body.payload ?? {},
        triggerType: 'api',
        startedByUserId: ctx.userId,
        onlyStep: body.onlyStep,
      });
    await this.chains.chain(ctx, actionChainId);
    if (body.payload && Object.keys(body.payload).length)
      throw badRequest("payload is the input of a new run; a re-run (runId) uses the run's state");
    const [existing, steps] = await Promise.all([
      this.runs(ctx.organizationId).get(body.runId),
      this.repos.tenant(ctx.organizationId).chains.listSteps(actionChainId),
    ]);
    if (!existing || existing.actionChainId !== actionChainId) throw invalidReference('runId', body.runId);
    this.checkOnlyStep(steps, body.onlyStep);
    const messageId = newId('msg');
    const admitted = await this.admit(ctx.organizationId, 'api', existing._id, existing.generation + 1);
    const run = await this.runs(ctx.organizationId).rerun(
      body.runId,
      { status: resetToRunning ? 'running' : 'pending', messageId, startedByUserId: ctx.userId },
      resetToRunning,
    );
    if (!run) {
      await admitted?.undo();
      throw conflict(
        'the run is still pending or running; re-run it once it has finished, or with resetToRunning=true',
      );
    }
    if (resetToRunning) await this.cancelSuperseded(ctx.organizationId, run);
    await this.launchOrFail(
      ctx.organizationId,
      this.executionOf(run, steps, body.onlyStep),
      undefined,
      admitted,
    );
    return { messageId, runId: run._id, actionChainId };
  }

  /**
   * A re-run with resetToRunning may supersede an execution still in flight: it is cancelled, so it starts no
   * further step; whatever it was doing when cancelled writes nothing to the run (its generation is no longer
   * the run's). One that already ended is not found.
   */
  private async cancelSuperseded(organizationId: string, run: ChainRun) {
    const previous =
      run.generation === 2 && run.firstExecutionWorkflowId
        ? run.firstExecutionWorkflowId
        : workflowIds.chainRun(organizationId, run._id, run.generation - 1);
    try {
      await this.temporal.client.workflow.getHandle(previous).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }

  async list(ctx: RequestContext, actionChainId: string, opts: PageRequest & { orderBy?: string }) {
    await this.chains.chain(ctx, actionChainId);
    const { items, total } = await this.runs(ctx.organizationId).list(actionChainId, {
      ...opts,
      ...parseOrderBy<ChainOrderField>(opts.orderBy, 'created_at'),
    });
    return page(items.map(toRunView), total, opts.offset);
  }

  /** The run, with no access check: for what started it or writes for it (a trigger handler, a step's tool). */
  getRun(organizationId: string, runId: string): Promise<ChainRun | null> {
    return this.runs(organizationId).get(runId);
  }

  /** The input of a run's first execution, again, for the workflow that runs it itself (firstExecutionWorkflowId)
   * and lost the answer of the activity that created it; null unless the run is one of that workflow's. */
  async firstExecution(
    organizationId: string,
    runId: string,
    workflowId: string,
  ): Promise<ChainRunInput | null> {
    const run = await this.runs(organizationId).get(runId);
    if (run?.firstExecutionWorkflowId !== workflowId || run.generation !== 1) return null;
    const steps = await this.repos.tenant(organizationId).chains.listSteps(run.actionChainId);
    return this.executionOf(run, steps, undefined);
  }

  /** The status of a run started under a derived id (a trigger handler's), or null when there is none. */
  async statusOf(organizationId: string, runId: string): Promise<ChainRun['status'] | null> {
    return (await this.runs(organizationId).get(runId))?.status ?? null;
  }

  /** Fails a run that stayed pending because every start of it failed: nobody would start it any more. */
  async failPending(organizationId: string, runId: string, statusMessage: string): Promise<void> {
    const run = await this.runs(organizationId).get(runId);
    if (run?.status === 'pending')
      await this.runs(organizationId).failUnstarted(run._id, run.generation, statusMessage);
  }

  async get(ctx: RequestContext, actionChainId: string, runId: string) {
    await this.chains.chain(ctx, actionChainId);
    const run = await this.runs(ctx.organizationId).get(runId);
    if (!run || run.actionChainId !== actionChainId) throw notFound('run');
    return toRunView(run);
  }
}
