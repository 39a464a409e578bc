export interface WorkflowResolution {
  bindings: Array<{ workflow: string; workflowId: string }>;
  missing: string[];
  ambiguous: string[];
}

/** Who starts a workflow run for an app, and why (for the run's record and its idempotency). */
export interface WorkflowStartRequest {
  organizationId: string;
  /** The workflow (an action chain, by actionChainId) the approval bound the declared name to. */
  workflowId: string;
  input: Record<string, unknown>;
  /** The member the app acts for. */
  userId: string;
  /** Repeats of one request start one run. */
  requestId: string;
  trigger: { type: 'app'; artifactId: string; versionId: string };
}

/**
 * What apps need of the organization's workflows. A workflow is an action chain, addressed by its
 * actionChainId. Approval asks which declared workflows cannot run; the app bridge starts runs of bound ones.
 * Implemented by lib/chains/workflow-catalog.ts, wired in createServices (`Deps.workflows`).
 */
export interface WorkflowCatalog {
  /**
   * Binds each declared workflow, an id or the name of exactly one of the organization's workflows, to its id.
   * `missing`: refs naming no workflow, or one that cannot run now; `ambiguous`: names shared by several.
   */
  resolve(organizationId: string, refs: readonly string[]): Promise<WorkflowResolution>;
  /** Starts a run; throws an AppError 404 when the workflow is gone or cannot run any more. */
  start(request: WorkflowStartRequest): Promise<{ runId: string }>;
}
