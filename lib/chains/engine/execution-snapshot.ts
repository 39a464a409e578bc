import type { ChainStepInput } from '@contracts';
import type { ChainDoc, StepDoc } from '@lib/chains/chain.schema';
import type { ChainRun } from '@lib/chains/chain-runs.repository';
import type { StepOutcome } from '@lib/chains/chain-run.schema';
import type { StepAttachmentDoc } from '@lib/chains/step-attachment.schema';
import type { ChainsStore } from '@lib/chains/store';
import { RunSuperseded } from './errors';
import type { StepRunRef } from './step-tools';

export type State = Record<string, unknown>;

/** One step of one execution, as read (from the store's copy of the execution or afresh). */
export interface StepRun {
  tenant: ChainsStore;
  chain: ChainDoc;
  step: StepDoc;
  attachments: StepAttachmentDoc[];
  runRef: StepRunRef;
  state: State;
  stepResult: { outcome: StepOutcome; generation: number } | undefined;
  snapshot: ExecutionSnapshot;
}

/**
 * One execution of a chain run as a step reads it: the run's state at `version` (its stateVersion), and the
 * chain, its steps and their attachments. A write-behind store keeps it between steps (see
 * WriteBehindRunStore); every write of the state is conditional on `version`, so a copy another worker's write
 * made stale is found out.
 */
export interface ExecutionSnapshot {
  chain: ChainDoc;
  steps: Map<string, StepDoc>;
  attachments: Map<string, StepAttachmentDoc[]>;
  runRef: StepRunRef;
  state: State;
  stepResults: Record<string, { outcome: StepOutcome; generation: number }>;
  version: number;
  /** The length of the state's JSON: a copy of a large state is not kept (MAX_CACHED_STATE_CHARS). */
  stateChars: number;
  /** The organization's balance after this worker's last debit for the execution (undefined: not known). */
  balance?: number;
}

/** A run's stateVersion (runs written before it existed have none: version 0). */
export const stateVersionOf = (run: ChainRun) => (run as { stateVersion?: number }).stateVersion ?? 0;

export function snapshotOf(
  run: ChainRun,
  chain: ChainDoc,
  steps: StepDoc[],
  attachments: StepAttachmentDoc[],
  balance?: number,
): ExecutionSnapshot {
  const byStep = new Map<string, StepAttachmentDoc[]>();
  for (const a of attachments) byStep.set(a.stepId, [...(byStep.get(a.stepId) ?? []), a]);
  return {
    chain,
    steps: new Map(steps.map((s) => [s._id, s])),
    attachments: byStep,
    runRef: { actionChainId: run.actionChainId, runId: run._id, startedByUserId: run.startedByUserId },
    state: JSON.parse(run.stateJson) as State,
    stepResults: { ...run.stepResults },
    version: stateVersionOf(run),
    stateChars: run.stateJson.length,
    balance,
  };
}

/** A chain, its steps and their attachments: what an execution's steps need, in one round of reads. */
export function readDefinition(tenant: ChainsStore, actionChainId: string) {
  return Promise.all([
    tenant.chains.get(actionChainId),
    tenant.chains.listSteps(actionChainId),
    tenant.chainAttachments.listForChain(actionChainId),
  ]);
}

/**
 * Reads an execution's run, chain, steps and attachments (one round). The first step of a planned execution
 * marks the run running in the same round (it is the run's read). A run re-run or deleted stops the execution.
 */
export async function readExecution(tenant: ChainsStore, input: ChainStepInput): Promise<ExecutionSnapshot> {
  // (An execution started before its input named the chain reads the chain after the run.)
  const [run, byInput] = await Promise.all([
    input.marksRunning
      ? tenant.chainRuns.markRunning(input.runId, input.generation)
      : tenant.chainRuns.get(input.runId),
    input.actionChainId ? readDefinition(tenant, input.actionChainId) : undefined,
  ]);
  if (!run)
    throw new RunSuperseded(input.marksRunning ? 'the run was re-run or deleted' : 'the run was deleted');
  if (run.generation !== input.generation) throw new RunSuperseded('the run was re-run');
  const [chain, steps, attachments] =
    input.actionChainId === run.actionChainId ? byInput! : await readDefinition(tenant, run.actionChainId);
  if (!chain) throw new RunSuperseded('the chain was deleted');
  return snapshotOf(run, chain, steps, attachments);
}
