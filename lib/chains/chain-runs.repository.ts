import { driverCollection } from '@lib/db/connection';
import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import type { PageRequest } from '@lib/paging';
import {
  chainRunModel,
  fanOutResultModel,
  type ChainRunDoc,
  type FanOutResultDoc,
  type RunStatus,
  type StepResult,
  type TriggerType,
} from './chain-run.schema';
import { CHAIN_ORDER_FIELDS, type ChainOrderField } from './chains.repository';

/** A run as lean() reads it (the step results map as a plain object). */
export type ChainRun = Omit<ChainRunDoc, 'stepResults'> & { stepResults: Record<string, StepResult> };

/** Runs of one organization's chains and the element outputs of their fan-out steps. */
export class ChainRunsRepository extends TenantRepository {
  private readonly runs = this.db.model(chainRunModel);
  private readonly elements = this.db.model(fanOutResultModel);

  list(actionChainId: string, query: PageRequest & { orderBy: ChainOrderField; descending: boolean }) {
    const dir = query.descending ? -1 : 1;
    return findPage(
      this.runs,
      this.scope<ChainRunDoc>({ actionChainId }),
      { [CHAIN_ORDER_FIELDS[query.orderBy]]: dir, _id: dir },
      query,
    ) as unknown as Promise<{ items: ChainRun[]; total: number }>;
  }

  get(runId: string) {
    return this.findOwned(this.runs, runId) as Promise<ChainRun | null>;
  }

  async create(fields: {
    runId: string;
    actionChainId: string;
    triggerType: TriggerType;
    stateJson: string;
    messageId: string;
    startedByUserId: string;
    status: RunStatus;
    firstExecutionWorkflowId?: string;
  }): Promise<ChainRun> {
    const { runId, ...rest } = fields;
    const doc = await this.runs.create({ ...rest, _id: runId, organizationId: this.organizationId });
    return doc.toObject({ flattenMaps: true }) as ChainRun;
  }

  /**
   * Starts the next execution of a run: of a finished one, or (`anyState`, resetToRunning) of one in any state,
   * superseding the execution in flight, whose writes no longer apply (see `current`). Null when the run does not
   * exist or, without `anyState`, is still pending or running.
   */
  rerun(
    runId: string,
    set: { status: RunStatus; messageId: string; startedByUserId: string },
    anyState = false,
  ) {
    const finished = anyState ? {} : { status: { $in: ['success', 'failed'] } };
    return this.runs
      .findOneAndUpdate(
        { _id: runId, organizationId: this.organizationId, ...finished },
        {
          $inc: { generation: 1 },
          // Shown running at once (resetToRunning): it starts now, as markRunning would have it.
          $set: {
            ...set,
            statusMessage: null,
            finishedAt: null,
            ...(set.status === 'running' ? { startedAt: new Date() } : {}),
          },
        },
        { new: true },
      )
      .lean<ChainRun>();
  }

  /** Writes of an execution apply only while it is the run's current one (a re-run supersedes it). */
  private current(runId: string, generation: number) {
    return { _id: runId, organizationId: this.organizationId, generation };
  }

  // The writes of every execution (markRunning, finish) and of every step (recordStep) go through the driver
  // (see driverCollection): they set updatedAt themselves, as the schema's timestamps would.

  /**
   * Marks a pending execution running, from now; the run as it is after (null when the execution is not the run's
   * current one, or its start was refused: see failUnstarted). An execution already running keeps its startedAt:
   * a retried first step must not move it, and a re-run shown running at once started then.
   */
  async markRunning(runId: string, generation: number) {
    const now = new Date();
    const runs = driverCollection(this.runs);
    const marked = await runs.findOneAndUpdate(
      { ...this.current(runId, generation), status: 'pending' },
      { $set: { status: 'running', startedAt: now, updatedAt: now } },
      { returnDocument: 'after' },
    );
    return (marked ??
      (await runs.findOne({
        ...this.current(runId, generation),
        startedAt: { $ne: null },
      }))) as ChainRun | null;
  }

  /**
   * Fails an execution whose start was refused (the caller was told so), unless it already ended; it never
   * started, so it has no startedAt. A start that reached Temporal after all (a frozen server that answered after
   * the call's deadline) then finds it so in markRunning and runs nothing.
   */
  async failUnstarted(runId: string, generation: number, statusMessage: string) {
    const now = new Date();
    await driverCollection(this.runs).updateOne(
      { ...this.current(runId, generation), status: { $in: ['pending', 'running'] } },
      { $set: { status: 'failed', statusMessage, startedAt: null, finishedAt: now, updatedAt: now } },
    );
  }

  /**
   * Records a step's result (and the new state) while the execution owns the run; with `stateVersion`, only while
   * the run's state is still at that version (the copy the caller computed the new state from). False otherwise
   * (the run was re-run or deleted, or its state was written meanwhile), and nothing was written.
   */
  async recordStep(
    runId: string,
    generation: number,
    result: StepResult,
    stateJson?: string,
    stateVersion?: number,
  ) {
    // Runs written before stateVersion existed have none: version 0.
    const atVersion =
      stateVersion === undefined
        ? {}
        : { stateVersion: stateVersion === 0 ? { $in: [0, null] } : stateVersion };
    // The result's fields in the schema's order, as mongoose would store the subdocument.
    const stored: StepResult = {
      stepId: result.stepId,
      stepOrder: result.stepOrder,
      name: result.name ?? '',
      outcome: result.outcome,
      detail: result.detail ?? null,
      modelCalls: result.modelCalls ?? 0,
      generation: result.generation,
      finishedAt: result.finishedAt,
    };
    const { matchedCount } = await driverCollection(this.runs).updateOne(
      { ...this.current(runId, generation), ...atVersion },
      {
        $set: {
          [`stepResults.${result.stepId}`]: stored,
          ...(stateJson ? { stateJson } : {}),
          updatedAt: new Date(),
        },
        $inc: { stateVersion: 1 },
      },
    );
    return matchedCount > 0;
  }

  async finish(
    runId: string,
    generation: number,
    status: 'success' | 'failed',
    statusMessage: string | null,
  ) {
    const now = new Date();
    return (await driverCollection(this.runs).findOneAndUpdate(
      this.current(runId, generation),
      { $set: { status, statusMessage, finishedAt: now, updatedAt: now } },
      { returnDocument: 'after' },
    )) as ChainRun | null;
  }

  async removeForChain(actionChainId: string) {
    const runs = await this.runs.find(this.scope<ChainRunDoc>({ actionChainId }), { _id: 1 }).lean();
    const runIds = runs.map((r) => r._id);
    await this.elements.deleteMany(this.scope<FanOutResultDoc>({ runId: { $in: runIds } }));
    await this.runs.deleteMany(this.scope<ChainRunDoc>({ actionChainId }));
  }

  private elementId(runId: string, stepId: string, index: number) {
    return `${runId}:${stepId}:${index}`;
  }

  /** The fingerprint the stored elements of a fan-out step were written with, if any. */
  async elementsFingerprint(runId: string, stepId: string): Promise<string | null> {
    const doc = await this.findOwned(this.elements, this.elementId(runId, stepId, 0));
    return doc?.fingerprint ?? null;
  }

  async putElements(runId: string, stepId: string, elements: unknown[], fingerprint: string) {
    const docs = elements.map((element, index) => ({
      _id: this.elementId(runId, stepId, index),
      organizationId: this.organizationId,
      runId,
      stepId,
      index,
      elementJson: JSON.stringify(element ?? null),
      fingerprint,
    }));
    for (let i = 0; i < docs.length; i += 1000) await this.elements.insertMany(docs.slice(i, i + 1000));
  }

  getElement(runId: string, stepId: string, index: number) {
    return this.findOwned(this.elements, this.elementId(runId, stepId, index));
  }

  async putElementOutput(
    runId: string,
    stepId: string,
    index: number,
    output: { outputJson: string; modelCalls: number },
  ) {
    await this.elements.updateOne(
      { _id: this.elementId(runId, stepId, index), organizationId: this.organizationId },
      { $set: output },
    );
  }

  /** Indexes in [from, to) that have no output yet. */
  async pendingElements(runId: string, stepId: string, from: number, to: number): Promise<number[]> {
    const docs = await this.elements
      .find(
        this.scope<FanOutResultDoc>({ runId, stepId, index: { $gte: from, $lt: to }, outputJson: null }),
        { index: 1 },
      )
      .sort({ index: 1 })
      .lean<Array<{ index: number }>>();
    return docs.map((d) => d.index);
  }

  /** Every element output of a fan-out step, in element order. */
  elementOutputs(runId: string, stepId: string) {
    return this.elements
      .find(this.scope<FanOutResultDoc>({ runId, stepId }), { index: 1, outputJson: 1, modelCalls: 1 })
      .sort({ index: 1 })
      .lean<Array<{ index: number; outputJson: string | null; modelCalls: number }>>();
  }

  async clearElements(runId: string, stepId?: string) {
    await this.elements.deleteMany(this.scope<FanOutResultDoc>({ runId, ...(stepId ? { stepId } : {}) }));
  }
}
