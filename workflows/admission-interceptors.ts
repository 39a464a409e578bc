import {
  proxySinks,
  TemporalFailure,
  workflowInfo,
  type Sinks,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { SEARCH_ATTRIBUTE_KEYS } from '@contracts';

/** Reported to the worker (worker/admission-sink.ts) when an execution ends; it frees the execution's admission
 * slot, if it holds one (README "Admission"). */
export interface AdmissionSinks extends Sinks {
  /** An execution of the organization ended (its type and id travel with the sink call). */
  admission: { ended(organizationId: string): void };
}

const { admission } = proxySinks<AdmissionSinks>();

function ended() {
  const info = workflowInfo();
  // A replayed end was reported when it happened (a replayer, as in the replay tests, has no such sink).
  if (info.unsafe.isReplaying) return;
  const organizationId = info.typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.organizationId);
  if (organizationId) admission.ended(organizationId);
}

/**
 * Bundled into every workflow (worker/workflow-bundle.ts). A sink is a side effect of the worker, not a command:
 * it leaves histories as they are, and it is not called again when a history is replayed. An execution ends when
 * its function returns or throws a TemporalFailure; any other error fails the workflow task, which is retried
 * (the execution goes on), and a continue-as-new (not a TemporalFailure) goes on under the same workflow id.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        try {
          const result = await next(input);
          ended();
          return result;
        } catch (err) {
          if (err instanceof TemporalFailure) ended();
          throw err;
        }
      },
    },
  ],
});
