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
}

export interface ChainRunResult {
  status: 'success' | 'failed';
  statusMessage: string | null;
}

/** The steps an execution runs, in order, and how fan-outs are cut up. */
export interface ChainRunPlan {
  steps: Array<{ stepId: string; stepOrder: number; name: string }>;
  fanOut: { batchSize: number; concurrency: number };
}

export interface ChainStepInput extends ChainRunInput {
  stepId: string;
}

/** How a step ended; `fan-out` means its elements are ready to run (`elements` of them). */
export type ChainStepOutcome =
  | { kind: 'success' | 'skipped'; detail?: string }
  | { kind: 'failed'; detail: string }
  | { kind: 'fan-out'; elements: number };

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
