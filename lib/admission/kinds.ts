import { WORKFLOWS } from '@contracts';

/**
 * The kinds of background work an organization's intake is bounded by (README "Admission"), each counted by the
 * executions of one workflow type that are admitted and not finished yet.
 */
export const ADMISSION_KINDS = [
  'webhook_deliveries',
  'chain_runs',
  'ingestions',
  'schedule_fires',
  'analyses',
] as const;
export type AdmissionKind = (typeof ADMISSION_KINDS)[number];

/** The workflow type whose executions a kind counts. */
export const KIND_WORKFLOW: Record<AdmissionKind, string> = {
  webhook_deliveries: WORKFLOWS.webhookDelivery,
  chain_runs: WORKFLOWS.chainRun,
  ingestions: WORKFLOWS.ingestFile,
  schedule_fires: WORKFLOWS.scheduleFire,
  analyses: WORKFLOWS.analysis,
};

const WORKFLOW_KIND = new Map(
  Object.entries(KIND_WORKFLOW).map(([kind, type]) => [type, kind as AdmissionKind]),
);

/** The kind an execution of this workflow type counts as, if any. */
export const kindOfWorkflow = (workflowType: string) => WORKFLOW_KIND.get(workflowType);

export type AdmissionLimits = Record<AdmissionKind, number>;

/** What people read: "chain runs". */
export const kindLabel = (kind: AdmissionKind) => kind.replace('_', ' ');
