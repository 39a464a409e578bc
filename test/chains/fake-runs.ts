/* eslint-disable @typescript-eslint/require-await -- async like the repository it replaces */
import type { StepResult } from '@lib/chains/chain-run.schema';

/*
 * ChainRunsRepository's documented rules, kept in memory: writes apply only to the run's current generation and,
 * with a stateVersion, only at that version, which every recordStep increments; lean reads are copies.
 */

export interface Run {
  _id: string;
  actionChainId: string;
  status: string;
  statusMessage: string | null;
  stateJson: string;
  generation: number;
  stepResults: Record<string, StepResult>;
  /** absent in runs written before it existed */
  stateVersion?: number;
  startedByUserId: string;
  /** set when an execution marks it running; null when its start was refused */
  startedAt?: Date | null;
}

interface Element {
  runId: string;
  stepId: string;
  index: number;
  elementJson: string;
  fingerprint: string;
  outputJson: string | null;
  modelCalls: number;
}

export const copy = <T>(value: T): T => structuredClone(value);

/** The runs repository's documented rules, kept in memory. */
export class FakeRuns {
  runs = new Map<string, Run>();
  elements = new Map<string, Element>();
  /** what recordStep was asked, in order (accepted or not) */
  recordCalls: Array<{ result: StepResult; stateJson?: string; stateVersion?: number; ok: boolean }> = [];
  /** runs a hook before each recordStep applies (another writer, a re-run) */
  beforeRecord?: () => void;

  /** how many times a run was read (get) */
  reads = 0;

  async get(runId: string) {
    this.reads++;
    const run = this.runs.get(runId);
    return run ? copy(run) : null;
  }

  async markRunning(runId: string, generation: number) {
    const run = this.runs.get(runId);
    if (!run || run.generation !== generation) return null;
    if (run.status === 'pending') Object.assign(run, { status: 'running', startedAt: new Date() });
    else if (!run.startedAt) return null;
    return copy(run);
  }

  async recordStep(
    runId: string,
    generation: number,
    result: StepResult,
    stateJson?: string,
    version?: number,
  ) {
    this.beforeRecord?.();
    const run = this.runs.get(runId);
    const ok =
      !!run &&
      run.generation === generation &&
      (version === undefined || (run.stateVersion ?? 0) === version);
    this.recordCalls.push({ result: copy(result), stateJson, stateVersion: version, ok });
    if (!ok) return false;
    run.stepResults[result.stepId] = copy(result);
    if (stateJson) run.stateJson = stateJson;
    // $inc on a run written before stateVersion existed starts it at 1.
    run.stateVersion = (run.stateVersion ?? 0) + 1;
    return true;
  }

  /** what was paid for when the run was shown ended (set by engineWorld) */
  paidAtFinish?: () => number;
  paidWhenFinished: number | undefined;

  async finish(runId: string, generation: number, status: string, statusMessage: string | null) {
    const run = this.runs.get(runId);
    if (!run || run.generation !== generation) return null;
    this.paidWhenFinished = this.paidAtFinish?.();
    Object.assign(run, { status, statusMessage });
    return copy(run);
  }

  async elementsFingerprint(runId: string, stepId: string) {
    return this.elements.get(`${runId}:${stepId}:0`)?.fingerprint ?? null;
  }

  async putElements(runId: string, stepId: string, values: unknown[], fingerprint: string) {
    values.forEach((v, index) =>
      this.elements.set(`${runId}:${stepId}:${index}`, {
        runId,
        stepId,
        index,
        elementJson: JSON.stringify(v ?? null),
        fingerprint,
        outputJson: null,
        modelCalls: 0,
      }),
    );
  }

  async getElement(runId: string, stepId: string, index: number) {
    const e = this.elements.get(`${runId}:${stepId}:${index}`);
    return e ? copy(e) : null;
  }

  async putElementOutput(
    runId: string,
    stepId: string,
    index: number,
    out: { outputJson: string; modelCalls: number },
  ) {
    const e = this.elements.get(`${runId}:${stepId}:${index}`);
    if (e) Object.assign(e, out);
  }

  private of(runId: string, stepId: string) {
    return [...this.elements.values()]
      .filter((e) => e.runId === runId && e.stepId === stepId)
      .sort((a, b) => a.index - b.index);
  }

  async pendingElements(runId: string, stepId: string, from: number, to: number) {
    return this.of(runId, stepId)
      .filter((e) => e.index >= from && e.index < to && e.outputJson === null)
      .map((e) => e.index);
  }

  async elementOutputs(runId: string, stepId: string) {
    return this.of(runId, stepId).map(({ index, outputJson, modelCalls }) => ({
      index,
      outputJson,
      modelCalls,
    }));
  }

  async clearElements(runId: string, stepId?: string) {
    for (const [id, e] of this.elements)
      if (e.runId === runId && (!stepId || e.stepId === stepId)) this.elements.delete(id);
  }
}
