import { WORKFLOWS } from '@contracts';

/**
 * The kinds of work an organization's intake is bounded by (docs/admission.md), each counted by the executions
 * of one workflow type that are admitted and not finished yet: the background kinds, and chat turns.
 */
export const ADMISSION_KINDS = [
  'webhook_deliveries',
  'chain_runs',
  'ingestions',
  'schedule_fires',
  'analyses',
  'turns',
] as const;
export type AdmissionKind = (typeof ADMISSION_KINDS)[number];

/** The workflow type whose executions a kind counts. */
export const KIND_WORKFLOW: Record<AdmissionKind, string> = {
  webhook_deliveries: WORKFLOWS.webhookDelivery,
  chain_runs: WORKFLOWS.chainRun,
  ingestions: WORKFLOWS.ingestFile,
  schedule_fires: WORKFLOWS.scheduleFire,
  analyses: WORKFLOWS.analysis,
  turns: WORKFLOWS.turn,
};

const WORKFLOW_KIND = new Map(
  Object.entries(KIND_WORKFLOW).map(([kind, type]) => [type, kind as AdmissionKind]),
);

/** The kind an execution of this workflow type counts as, if any. */
export const kindOfWorkflow = (workflowType: string) => WORKFLOW_KIND.get(workflowType);

/**
 * Kinds the worker counts when an execution starts, for what no intake counted: an inbound mail's turn, a child
 * workflow. Not the others: a schedule fire admits itself in its first activity, which a count taken at its start
 * would let through unbounded.
 */
export const COUNTED_WHEN_STARTED: ReadonlySet<AdmissionKind> = new Set(['turns']);

export type AdmissionLimits = Record<AdmissionKind, number>;

/** What people read: "chain runs". */
export const kindLabel = (kind: AdmissionKind) => kind.replace('_', ' ');
