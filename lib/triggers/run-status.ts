import type { ChainRunsService } from '@lib/chains/chain-runs.service';
import type { ConversationsService } from '@lib/conversations/conversations.service';
import { iso } from '@lib/db/view';
import type { HandlerRunDoc } from './handler-run.schema';

export type HandlerRunStatus = 'pending' | 'running' | 'success' | 'failed' | 'skipped' | 'unknown';

export interface HandlerRunView {
  handlerId: string;
  handlerType: string;
  runId: string | null;
  status: HandlerRunStatus;
  statusMessage: string | null;
  startedAt: string;
  endedAt: string | null;
}

/** What handlers start, read through the features that own them. */
export interface StartedWork {
  chainRuns: Pick<ChainRunsService, 'getRun'>;
  conversations: Pick<ConversationsService, 'exists' | 'storedReply'>;
}

/**
 * How a handler's execution is doing, read from what it started: a chain run's status, or whether the agent's
 * reply in the conversation is stored (`complete` → success, `error` → failed). `unknown` when that run or
 * conversation has since been deleted.
 */
export async function describeHandlerRun(started: StartedWork, run: HandlerRunDoc): Promise<HandlerRunView> {
  const base = {
    handlerId: run.handlerId,
    handlerType: run.handlerType,
    runId: run.runId ?? null,
    statusMessage: run.statusMessage ?? null,
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
  };
  if (run.status === 'failed' || run.status === 'skipped') return { ...base, status: run.status };
  if (run.status === 'starting' || !run.runId) return { ...base, status: 'pending' };
  const { organizationId } = run;
  if (run.handlerType === 'agent') {
    const [conversation, reply] = await Promise.all([
      started.conversations.exists(organizationId, run.runId),
      started.conversations.storedReply(organizationId, run.runId, run.requestId ?? ''),
    ]);
    if (!conversation) return { ...base, status: 'unknown' };
    if (!reply) return { ...base, status: 'running' };
    return {
      ...base,
      status: reply.status === 'error' ? 'failed' : 'success',
      endedAt: iso(reply.createdAt),
    };
  }
  const chainRun = await started.chainRuns.getRun(organizationId, run.runId);
  if (!chainRun) return { ...base, status: 'unknown' };
  return {
    ...base,
    status: chainRun.status,
    statusMessage: chainRun.statusMessage ?? null,
    endedAt: chainRun.status === 'success' || chainRun.status === 'failed' ? iso(chainRun.finishedAt) : null,
  };
}
