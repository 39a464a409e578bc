import type { InjectedSinks } from '@temporalio/worker';
import type { Admission } from '@lib/admission/admission';
import { kindOfWorkflow } from '@lib/admission/kinds';
import type { AdmissionSinks } from '@workflows/admission-interceptors';

/** Frees the admission slot of an execution that ended (workflows/admission-interceptors.ts); what this misses
 * (the worker died first, Redis was down) the reconciler frees later (lib/admission/reconcile.ts). */
export function admissionSinks(admission: Pick<Admission, 'release'>): InjectedSinks<AdmissionSinks> {
  return {
    admission: {
      ended: {
        // `info` is a copy made for the sink (its search attributes lose their methods on the way).
        fn: async (info, organizationId) => {
          const kind = kindOfWorkflow(info.workflowType);
          if (kind) await admission.release(organizationId, kind, info.workflowId);
        },
        callDuringReplay: false,
      },
    },
  };
}
