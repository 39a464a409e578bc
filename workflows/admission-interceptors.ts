import {
  proxySinks,
  TemporalFailure,
  workflowInfo,
  type Sinks,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { SEARCH_ATTRIBUTE_KEYS } from '@contracts';

/** Reported to the worker (worker/admission-sink.ts) when an execution starts and ends: it counts the execution
 * against its organization's bound of its kind, if it has one, and frees its slot (docs/admission.md). */
export interface AdmissionSinks extends Sinks {
  /** An execution of the organization started or ended (its type and id travel with the sink call). */
  admission: { started(organizationId: string): void; ended(organizationId: string): void };
}

const { admission } = proxySinks<AdmissionSinks>();

function report(event: 'started' | 'ended') {
  const info = workflowInfo();
  // A replayed start or end was reported when it happened (a replayer, as in the replay tests, has no such sink).
  if (info.unsafe.isReplaying) return;
  const organizationId = info.typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.organizationId);
  if (organizationId) admission[event](organizationId);
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
        // What the API started was counted before it started; an inbound mail's turn (a child) is counted here.
        report('started');
        try {
          const result = await next(input);
          report('ended');
          return result;
        } catch (err) {
          if (err instanceof TemporalFailure) report('ended');
          throw err;
        }
      },
    },
  ],
});
