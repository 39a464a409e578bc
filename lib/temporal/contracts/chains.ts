/** One execution of a chain run (a re-run is the next generation, with its own workflow id). */
export interface ChainRunInput {
  organizationId: string;
  runId: string;
  generation: number;
  /** the run's chain: lets a step read the chain alongside the run (absent in executions started before it
   * was added; those read the run first) */
  actionChainId?: string;
  /** run only the step with this stepOrder, against the run's state */
  onlyStep?: number;
  /** the steps to run, planned when the execution was created (absent in executions started before it was
   * added; those plan in a first local activity, which also marks the run running) */
  plan?: PlannedSteps;
}

export interface ChainRunResult {
  status: 'success' | 'failed';
  statusMessage: string | null;
}

/** The steps an execution runs, in order. */
export interface PlannedSteps {
  steps: Array<{ stepId: string; stepOrder: number; name: string }>;
}

/** How a fan-out step's elements are cut up: slices of `batchSize`, `concurrency` elements at a time. */
export interface FanOutSettings {
  batchSize: number;
  concurrency: number;
}

/** What the local activity that begins an execution without a plan answers. */
export interface ChainRunPlan extends PlannedSteps {
  fanOut: FanOutSettings;
}

export interface ChainStepInput extends ChainRunInput {
  stepId: string;
  /** the execution's first step (of a planned execution): it marks the run running as it reads it */
  marksRunning?: boolean;
  /** the execution's last step (of a planned execution): once it succeeds or is skipped, it ends the run */
  finishesRun?: boolean;
  /** the execution's workflow hands a step's unwritten success on (as `previous`): the step may return before
   * its result is written (absent when scheduled by workflow code from before it: the step writes first) */
  handsOnResults?: boolean;
  /** the execution's last step returned before its result was written: written first, from this if need be */
  previous?: UnwrittenStep;
}

/** A step's success as its activity returned it while the write of it was still under way. */
export interface UnwrittenStep {
  stepId: string;
  stepOrder: number;
  name: string;
  modelCalls: number;
  /** ISO 8601 */
  finishedAt: string;
  /** what the step added to the state */
  fields: Record<string, unknown>;
  /** the run's stateVersion the step read: the state its answer is over */
  version: number;
}

/** How a step ended; `fan-out` means its elements are ready to run (`elements` of them, cut up as the worker's
 * settings say; absent in outcomes recorded before, whose execution took them from its ChainRunPlan). A failed
 * step's `modelCalls`: the calls it made before it failed (absent when none, or in outcomes recorded before). A
 * step that fails by throwing carries them in its failure's details instead (chainStepFailed, the engine's Spent). */
export type ChainStepOutcome =
  | { kind: 'success' | 'skipped'; detail?: string; unwritten?: UnwrittenStep }
  | { kind: 'failed'; detail: string; modelCalls?: number }
  | { kind: 'fan-out'; elements: number; fanOut?: FanOutSettings };

/** A slice of a fan-out step's elements, run by one child workflow. */
export interface ChainFanOutInput extends ChainStepInput {
  from: number;
  to: number;
  concurrency: number;
}

export interface ChainElementInput extends ChainStepInput {
  index: number;
}

/** An agent turn running a chain attached to its agent (the chain-run tool). */
export interface AgentChainRunInput {
  organizationId: string;
  agentId: string;
  actionChainId: string;
  /** the tool call's workflow-scoped id: the run id derives from it, so a retry finds the same run */
  callKey: string;
  /** the tool call's arguments (JSON text): the run's input */
  arguments: string;
}

export type ChainRunWorkflow = (input: ChainRunInput) => Promise<ChainRunResult>;
