import type { InjectedSinks } from '@temporalio/worker';
import type { Admission } from '@lib/admission/admission';
import { COUNTED_WHEN_STARTED, kindOfWorkflow } from '@lib/admission/kinds';
import type { AdmissionSinks } from '@workflows/admission-interceptors';

/** Counts a turn that started, if nothing counted it before (COUNTED_WHEN_STARTED), and frees the admission slot of one that ended
 * (workflows/admission-interceptors.ts); what this misses (the worker died first, Redis was down) the reconciler
 * frees later (lib/admission/reconcile.ts). */
export function admissionSinks(
  admission: Pick<Admission, 'record' | 'release'>,
): InjectedSinks<AdmissionSinks> {
  return {
    admission: {
      started: {
        fn: async (info, organizationId) => {
          const kind = kindOfWorkflow(info.workflowType);
          if (kind && COUNTED_WHEN_STARTED.has(kind))
            await admission.record(organizationId, kind, info.workflowId);
        },
        callDuringReplay: false,
      },
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
