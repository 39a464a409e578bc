import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { childSearchAttributes } from './search-attributes';
import { ParentClosePolicy, startChild, workflowInfo, WorkflowIdReusePolicy } from '@temporalio/workflow';
import { WORKFLOWS, workflowIds, type TriggerHandlerInput, type TriggerHandlerWorkflow } from '@contracts';

/**
 * Starts one workflow per handler, its id derived from this workflow's (a fire's or a delivery's). An id is never
 * used twice (REJECT_DUPLICATE, even after that run ended), so a retried or repeated fire or delivery finds its
 * handlers already started and runs none of them again. The handlers outlive this workflow (ABANDON): a fire or
 * delivery is done once its handlers are started.
 */
export async function startHandlers(inputs: TriggerHandlerInput[]): Promise<number> {
  const parent = workflowInfo().workflowId;
  let started = 0;
  await Promise.all(
    inputs.map(async (input) => {
      try {
        await startChild<TriggerHandlerWorkflow>(WORKFLOWS.triggerHandler, {
          workflowId: workflowIds.triggerHandler(parent, input.handlerId),
          args: [input],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          typedSearchAttributes: childSearchAttributes(),
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
        started++;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }),
  );
  return started;
}
