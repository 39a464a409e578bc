import type { WorkflowCatalog, WorkflowStartRequest } from '@lib/artifacts/workflow-catalog';
import { AppError, notFound } from '@lib/errors';
import type { Repositories } from '@lib/repositories';
import { derivedRunId, type ChainRunsService } from './chain-runs.service';

/** The organization's workflows as apps see them: its action chains; one can run when it has an enabled step. */
export class ChainWorkflowCatalog implements WorkflowCatalog {
  constructor(
    private readonly repos: Repositories,
    private readonly runs: Pick<ChainRunsService, 'startRun'>,
  ) {}

  async findUnrunnable(organizationId: string, workflowIds: readonly string[]): Promise<string[]> {
    const chains = this.repos.tenant(organizationId).chains;
    const found = await chains.getMany([...workflowIds]);
    const runnable = new Set<string>();
    for (const chain of found)
      if ((await chains.listSteps(chain._id)).some((s) => s.enabled)) runnable.add(chain._id);
    return workflowIds.filter((id) => !runnable.has(id));
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
