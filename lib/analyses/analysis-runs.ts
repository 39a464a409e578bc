import { WorkflowNotFoundError } from '@temporalio/client';
import { WORKFLOWS, workflowIds, type AnalysisInput, type AnalysisWorkflow } from '@contracts';
import type { Admission, Slot } from '@lib/admission/admission';
import type { Tenants } from '@lib/db/tenants';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import { ACTIVE_STATUSES } from './analysis-rules';
import type { AnalysisDoc } from './analysis.schema';
import type { AnalysesStore } from './store';

const inputOf = (a: AnalysisDoc): AnalysisInput => ({
  organizationId: a.organizationId,
  analysisId: a._id,
  generation: a.generation,
});

/** Starts the run of the analysis's current generation; a repeat finds the run already started. It counts as
 * one of the organization's unfinished analyses (`admitted`: see Admission.startCounted). */
export async function startRun(
  temporal: TemporalDeps,
  admission: Pick<Admission, 'startCounted'>,
  analysis: AnalysisDoc,
  admitted?: Slot,
) {
  const input = inputOf(analysis);
  const workflowId = workflowIds.analysis(input.organizationId, input.analysisId, input.generation);
  await admission.startCounted(
    input.organizationId,
    'analyses',
    workflowId,
    () =>
      startIdempotent<AnalysisWorkflow>(temporal, WORKFLOWS.analysis, {
        workflowId,
        // A generation runs once, even after its run ended.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        args: [input],
        attributes: { organizationId: input.organizationId },
      }),
    admitted,
  );
}

/** Room for the run of an analysis's generation, taken before anything is written (429 beyond the bound). */
export const admitRun = (
  admission: Pick<Admission, 'admit'>,
  organizationId: string,
  analysisId: string,
  generation: number,
) =>
  admission.admit(organizationId, 'analyses', workflowIds.analysis(organizationId, analysisId, generation));

/**
 * Asks the run of `analysis` (as read before a re-run or removal) to stop, when it may still be going. The run
 * writes nothing afterwards: its generation is no longer current, or its analysis is gone.
 */
export async function cancelRun(temporal: TemporalDeps, analysis: AnalysisDoc) {
  if (!ACTIVE_STATUSES.includes(analysis.status)) return;
  const { organizationId, analysisId, generation } = inputOf(analysis);
  try {
    await temporal.client.workflow
      .getHandle(workflowIds.analysis(organizationId, analysisId, generation))
      .cancel();
  } catch (err) {
    // The run has already ended: nothing to stop.
    if (err instanceof WorkflowNotFoundError) return;
    throw err;
  }
}

/** Removes the analyses of a deleted conversation and stops their runs. */
export async function removeConversationAnalyses(
  repos: Tenants<AnalysesStore>,
  temporal: TemporalDeps,
  organizationId: string,
  conversationId: string,
) {
  const repo = repos.tenant(organizationId).analyses;
  const analyses = await repo.allForConversation(conversationId);
  await repo.removeForConversation(conversationId);
  await Promise.all(analyses.map((a) => cancelRun(temporal, a)));
}
