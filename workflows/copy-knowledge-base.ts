import { continueAsNew, executeChild, workflowInfo } from '@temporalio/workflow';
import { childSearchAttributes } from './search-attributes';
import {
  WORKFLOWS,
  workflowIds,
  type CopyKnowledgeBaseInput,
  type IngestFileInput,
  type IngestFileResult,
} from '@contracts';
import { kbStore } from './kb-activity-proxies';

const PAGE = 50;

/**
 * Copies a knowledge base to another organization: a new knowledge base there, and one copy (its own
 * ingestion run, which copies object, chunks and vectors) of every READY file. Id: workflowIds.copyKnowledgeBase.
 */
export async function copyKnowledgeBaseWorkflow(
  input: CopyKnowledgeBaseInput & { afterId?: string | null; copied?: number },
): Promise<{ knowledgeBaseId: string; files: number }> {
  const destId = await kbStore.createKnowledgeBaseCopy(input);
  if (!destId) return { knowledgeBaseId: '', files: 0 };
  let afterId = input.afterId ?? null;
  let copied = input.copied ?? 0;
  for (;;) {
    const ids = await kbStore.nextFileIds({
      organizationId: input.organizationId,
      knowledgeBaseId: input.knowledgeBaseId,
      afterId,
      limit: PAGE,
    });
    const runs = await Promise.all(
      ids.map(async (fileId) => {
        const copy = await kbStore.createFileCopy({
          source: { organizationId: input.organizationId, fileId },
          organizationId: input.toOrganizationId,
          knowledgeBaseId: destId,
          jobId: input.messageId,
          userId: input.userId,
          uploadDeadline: new Date(Date.now() + 3_600_000).toISOString(),
        });
        if (!copy) return false;
        const result = await executeChild<(i: IngestFileInput) => Promise<IngestFileResult>>(
          WORKFLOWS.ingestFile,
          {
            workflowId: workflowIds.ingestFile(copy.organizationId, copy.fileId, copy.generation),
            args: [copy],
            // the copy belongs to the destination organization and knowledge base
            typedSearchAttributes: childSearchAttributes({
              organizationId: copy.organizationId,
              knowledgeBaseId: copy.knowledgeBaseId,
            }),
          },
        );
        return result.status === 'READY';
      }),
    );
    copied += runs.filter(Boolean).length;
    if (ids.length < PAGE) break;
    afterId = ids[ids.length - 1]!;
    if (workflowInfo().historyLength > 5_000)
      await continueAsNew<typeof copyKnowledgeBaseWorkflow>({ ...input, afterId, copied });
  }
  return { knowledgeBaseId: destId, files: copied };
}
