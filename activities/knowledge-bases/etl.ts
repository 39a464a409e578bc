import type { IngestFileInput } from '@contracts';
import { memberContext } from '@lib/auth/authenticator';
import { derivedRunId, type ChainRunsService } from '@lib/chains/chain-runs.service';
import type { ConversationsService } from '@lib/conversations/conversations.service';
import type { Tenants } from '@lib/db/tenants';
import { AppError } from '@lib/errors';
import { conditionsHold } from '@lib/knowledge-bases/etl-conditions';
import type { KnowledgeBasesStore } from '@lib/knowledge-bases/store';
import type { Logger } from '@lib/logger';
import type { MemberDoc } from '@lib/users/member.schema';

/** How much of a file's text an ETL agent gets in its first message. */
export const ETL_TEXT_LIMIT = 20_000;

export interface EtlDeps {
  repos: Tenants<KnowledgeBasesStore>;
  /** The rule creator's membership (the users feature). */
  members: { member(organizationId: string, userId: string): Promise<MemberDoc | null> };
  conversations: Pick<ConversationsService, 'create'>;
  chainRuns: Pick<ChainRunsService, 'startRun'>;
  logger: Logger;
}

export type EtlOutcome = { etlId: string; outcome: 'started' | 'skipped'; detail: string };

export function createEtlActivities(deps: EtlDeps) {
  /** The text an agent rule's conversation opens with: the prompt, the file, and the start of its text. */
  async function messageFor(input: IngestFileInput, prompt: string, fileName: string, chunkCount: number) {
    const chunks = await deps.repos
      .tenant(input.organizationId)
      .kbChunks.range(input, 0, Math.min(chunkCount, 40));
    let text = '';
    for (const c of chunks) {
      if (text.length >= ETL_TEXT_LIMIT) break;
      text += `${c.text}\n`;
    }
    return (
      `${prompt}\n\nFile: ${fileName} (fileId ${input.fileId}, knowledge base ${input.knowledgeBaseId})\n` +
      `---\n${text.slice(0, ETL_TEXT_LIMIT)}`
    );
  }

  return {
    /**
     * Runs the knowledge base's ETL rules whose conditions the READY file meets. An agent rule starts one
     * conversation, with its creator's rights, per rule, file and generation (the request id makes a retry
     * idempotent). A workflow rule starts one run of its action chain per rule, file and generation, with
     * `{ fileId, knowledgeBaseId, fileName }` as input (the run id derives from them, so a retry is idempotent).
     */
    async runEtlRules(input: IngestFileInput): Promise<EtlOutcome[]> {
      const tenant = deps.repos.tenant(input.organizationId);
      const [rules, file] = await Promise.all([
        tenant.etlRules.list(input.knowledgeBaseId),
        tenant.kbFiles.getIncludingDeleted(input.fileId),
      ]);
      if (!file || file.deletedAt || file.generation !== input.generation) return [];
      const outcomes: EtlOutcome[] = [];
      for (const rule of rules) {
        if (!conditionsHold(file, rule.conditions)) continue;
        const skip = (detail: string) => outcomes.push({ etlId: rule._id, outcome: 'skipped', detail });
        const member = await deps.members.member(input.organizationId, rule.creatorUserId);
        if (!member) {
          skip('the rule creator is no longer a member');
          continue;
        }
        const requestId = `etl-${rule._id}-${input.fileId}-${input.generation}`;
        try {
          if (rule.etlType === 'workflow') {
            const started = await deps.chainRuns.startRun(input.organizationId, {
              actionChainId: rule.workflowId!,
              payload: {
                fileId: input.fileId,
                knowledgeBaseId: input.knowledgeBaseId,
                fileName: file.fileName,
              },
              triggerType: 'etl',
              startedByUserId: rule.creatorUserId,
              runId: derivedRunId(requestId),
            });
            outcomes.push({ etlId: rule._id, outcome: 'started', detail: started.runId });
            continue;
          }
          const started = await deps.conversations.create(
            memberContext(member, 'session'),
            {
              agentId: rule.agentId!,
              title: `${file.fileName} (ETL)`,
              message: await messageFor(input, rule.prompt ?? '', file.fileName, file.chunkCount ?? 0),
              requestId,
            },
            { background: true },
          );
          outcomes.push({ etlId: rule._id, outcome: 'started', detail: started.conversationId });
        } catch (err) {
          // A refusal that will not change (the agent or chain is gone, the agent no longer usable by the
          // creator, the chain's input does not take the file) skips the rule; a full organization (429) or an outage is retried by Temporal.
          if (err instanceof AppError && err.status !== 429) skip(err.message);
          else throw err;
        }
      }
      if (outcomes.length)
        deps.logger.info(
          { organizationId: input.organizationId, fileId: input.fileId, outcomes },
          'ETL rules ran',
        );
      return outcomes;
    },
  };
}
