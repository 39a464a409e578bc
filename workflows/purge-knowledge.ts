import { continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { PurgeKnowledgeInput } from '@contracts';
import { kbStore } from './kb-activity-proxies';

const PAGE = 100;

/**
 * Removes a deleted file, or a deleted knowledge base with every file, its vectors, ETL rules and agent
 * attachments. Each step is idempotent, so a run that stopped half-way finishes when it resumes. Ids:
 * workflowIds.purgeFile / purgeKnowledgeBase.
 */
export async function purgeKnowledgeWorkflow(
  input: PurgeKnowledgeInput & { afterId?: string | null },
): Promise<void> {
  const { organizationId, knowledgeBaseId } = input;
  if (input.fileId) {
    await kbStore.purgeFile({ organizationId, knowledgeBaseId, fileId: input.fileId });
    return;
  }
  let afterId = input.afterId ?? null;
  for (;;) {
    const ids = await kbStore.nextFileIds({ organizationId, knowledgeBaseId, afterId, limit: PAGE });
    for (const fileId of ids) await kbStore.purgeFile({ organizationId, knowledgeBaseId, fileId });
    if (ids.length < PAGE) break;
    afterId = ids[ids.length - 1]!;
    // A knowledge base of many thousand files: keep the history small.
    if (workflowInfo().historyLength > 5_000)
      await continueAsNew<typeof purgeKnowledgeWorkflow>({ ...input, afterId });
  }
  await kbStore.finishKnowledgeBasePurge({ organizationId, knowledgeBaseId });
}
