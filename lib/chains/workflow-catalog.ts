import type {
  WorkflowCatalog,
  WorkflowResolution,
  WorkflowStartRequest,
} from '@lib/artifacts/workflow-catalog';
import { AppError, notFound } from '@lib/errors';
import type { Tenants } from '@lib/db/tenants';
import { derivedRunId, type ChainRunsService } from './chain-runs.service';
import type { ChainsStore } from './store';

/** The organization's workflows as apps see them: its action chains; one can run when it has an enabled step. */
export class ChainWorkflowCatalog implements WorkflowCatalog {
  constructor(
    private readonly repos: Tenants<ChainsStore>,
    private readonly runs: Pick<ChainRunsService, 'startRun'>,
  ) {}

  /** An id wins over a name; a name must belong to exactly one chain. */
  async resolve(organizationId: string, refs: readonly string[]): Promise<WorkflowResolution> {
    const chains = this.repos.tenant(organizationId).chains;
    const [byId, byName] = await Promise.all([chains.getMany([...refs]), chains.listByNames([...refs])]);
    const ids = new Set(byId.map((c) => c._id));
    const result: WorkflowResolution = { bindings: [], missing: [], ambiguous: [] };
    for (const ref of refs) {
      const named = byName.filter((c) => c.name === ref);
      if (ids.has(ref)) result.bindings.push({ workflow: ref, workflowId: ref });
      else if (named.length > 1) result.ambiguous.push(ref);
      else if (named.length === 1) result.bindings.push({ workflow: ref, workflowId: named[0]!._id });
      else result.missing.push(ref);
    }
    const runnable = await Promise.all(
      result.bindings.map(async (b) => (await chains.listSteps(b.workflowId)).some((s) => s.enabled)),
    );
    const missing = new Set([
      ...result.missing,
      ...result.bindings.filter((_, i) => !runnable[i]).map((b) => b.workflow),
    ]);
    // Reported in the order the manifest declares them.
    return {
      bindings: result.bindings.filter((_, i) => runnable[i]),
      missing: refs.filter((r) => missing.has(r)),
      ambiguous: result.ambiguous,
    };
  }

  async start(req: WorkflowStartRequest): Promise<{ runId: string }> {
    try {
      const { runId } = await this.runs.startRun(req.organizationId, {
        actionChainId: req.workflowId,
        payload: req.input,
        triggerType: 'app',
        startedByUserId: req.userId,
        runId: derivedRunId(`app-${req.trigger.artifactId}-${req.trigger.versionId}-${req.requestId}`),
      });
      return { runId };
    } catch (err) {
      if (err instanceof AppError && err.status === 404) throw notFound('workflow');
      throw err;
    }
  }
}
